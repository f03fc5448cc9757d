package deliver

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"

	"github.com/fedkit/fedkit/deliver/driver"
)

func hostOf(inbox string) string {
	u, err := url.Parse(inbox)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}

// handle makes one attempt at j. work bounds the sending; stop, when it ends
// before a host slot is free, returns j to the queue untouched.
func (d *Deliverer) handle(work, stop context.Context, j *driver.Job, rs *runSlot) {
	e := j.Envelope
	host := hostOf(j.Inbox)
	number := j.Attempts + 1
	now := d.cfg.Now()

	if !e.Deadline.IsZero() && !now.Before(e.Deadline) {
		d.settle(work, j, host, driver.ResultGaveUp, j.Attempts, ErrDeadline)
		return
	}
	if d.cfg.SkipIf != nil && d.cfg.SkipIf(work, j.Inbox, e) {
		d.settle(work, j, host, driver.ResultSkipped, j.Attempts, ErrSkipped)
		return
	}
	if d.skipUnavailable(work, j, host) {
		return
	}

	release, err := d.acquireHost(stop, host, rs)
	if err != nil {
		// Shutting down: leave it for the next claim, attempts unchanged.
		d.finish(work, j, driver.Outcome{RetryAt: now, Attempts: j.Attempts})
		return
	}
	defer release()
	if stop.Err() != nil {
		// A slot came free only after the stop: this one was not in flight.
		d.finish(work, j, driver.Outcome{RetryAt: now, Attempts: j.Attempts})
		return
	}
	if j.LeaseUntil.Sub(d.cfg.Now()) < d.cfg.AttemptTimeout {
		// Waited for a slot until its lease could lapse mid-request, when
		// another process may claim and send it too: do not send; give it
		// back while it is still ours.
		d.finish(work, j, driver.Outcome{RetryAt: now, Attempts: j.Attempts})
		return
	}
	work, span := d.startAttempt(work, j)
	defer span.End()

	key, err := d.keys.Key(work, e.KeyID)
	if err != nil && work.Err() != nil {
		d.cutOff(work, j)
		return
	}
	if err != nil {
		d.log.Warn("deliver: sender key not loaded", "key_id", e.KeyID, "err", err)
		d.failed(work, j, host, number, &DeliveryError{Outcome: AttemptFailed, Inbox: j.Inbox, Err: err}, Attempt{})
		return
	}

	var adm driver.Admission
	light := host
	if b := d.cfg.Breaker; b != nil {
		if b.PerInbox {
			light = j.Inbox
		}
		adm, err = b.Store.Admit(work, light, d.cfg.Now(), d.rule())
		if d.breakerLog.note(err, "deliver: breaker store failed; sending anyway", "light", light) {
			// A breaker store that cannot answer must not stop delivery.
			adm = driver.Admission{Allow: true}
		}
		if !adm.Allow {
			d.failed(work, j, host, number, &DeliveryError{Outcome: AttemptHeld, Inbox: j.Inbox, Until: adm.Until}, Attempt{})
			return
		}
	}

	start := d.cfg.Now()
	attemptCtx, cancelAttempt := context.WithTimeout(work, d.cfg.AttemptTimeout)
	status, retryAfter, scheme, sendErr := d.send(attemptCtx, j, host, key, rs)
	cancelAttempt()
	if sendErr != nil && work.Err() != nil {
		// Cut off by shutdown (Run's grace period ended, or RunDue's
		// caller cancelled): not the remote's failure, so no attempt and
		// no breaker failure. An unrecorded probe is replaced once its
		// probe window lapses.
		d.cutOff(work, j)
		return
	}
	att := Attempt{Duration: d.cfg.Now().Sub(start), StatusCode: status, Scheme: scheme, Probe: adm.Probe}

	var derr *DeliveryError
	reachable := true // for the breaker: the host answered
	record := !errors.Is(sendErr, errSign) && !unsent(sendErr)
	switch {
	case sendErr == nil && status >= 200 && status < 300:
	case sendErr != nil:
		outcome := AttemptFailed
		if permanentSendError(sendErr) {
			outcome = AttemptRefused
		} else {
			reachable = false
		}
		derr = &DeliveryError{Outcome: outcome, Inbox: j.Inbox, StatusCode: status, Err: sendErr}
	case d.permanent(work, e.KeyID, status):
		derr = &DeliveryError{Outcome: AttemptRefused, Inbox: j.Inbox, StatusCode: status, RetryAfter: retryAfter}
	default:
		reachable = false
		derr = &DeliveryError{Outcome: AttemptFailed, Inbox: j.Inbox, StatusCode: status, RetryAfter: retryAfter}
	}
	// Only the host's answer, or its silence, moves its breaker: not our own
	// signing failure, nor the guard refusing to send.
	if b := d.cfg.Breaker; b != nil && record {
		err := b.Store.Record(work, light, adm.Probe, reachable, d.cfg.Now(), d.rule())
		d.breakerLog.note(err, "deliver: breaker store failed", "light", light)
	}
	if record {
		d.observeAvailability(work, host, derr == nil, reachable)
	}
	if derr == nil {
		att.Outcome = AttemptDelivered
		d.attempt(work, j, host, number, att)
		d.settle(work, j, host, driver.ResultDelivered, number, nil)
		return
	}
	d.failed(work, j, host, number, derr, att)
}

// cutOff returns j, interrupted by the end of work, to the queue due at
// once with its attempts unchanged. The remote may have received it; a
// delivery is at least once.
func (d *Deliverer) cutOff(work context.Context, j *driver.Job) {
	d.log.Info("deliver: delivery cut off by shutdown; returned to the queue", "inbox", j.Inbox)
	d.finish(work, j, driver.Outcome{RetryAt: d.cfg.Now(), Attempts: j.Attempts})
}

func (d *Deliverer) rule() driver.BreakerRule {
	return driver.BreakerRule{Threshold: d.cfg.Breaker.Threshold, CoolOff: d.cfg.Breaker.CoolOff}
}

// failed reports an attempt that did not deliver, att with derr's outcome,
// and either settles the job or schedules its retry.
func (d *Deliverer) failed(ctx context.Context, j *driver.Job, host string, number int, derr *DeliveryError, att Attempt) {
	e := j.Envelope
	att.Outcome, att.Err = derr.Outcome, derr
	d.attempt(ctx, j, host, number, att)
	if derr.Outcome == AttemptRefused {
		if derr.Err != nil {
			d.log.Info("deliver: refused for good", "inbox", j.Inbox, "status", derr.StatusCode, "err", derr.Err)
		} else {
			d.log.Info("deliver: refused for good", "inbox", j.Inbox, "status", derr.StatusCode)
		}
		if d.cfg.OnFailure != nil {
			d.cfg.OnFailure(ctx, Failure{Inbox: j.Inbox, Host: host, ActivityID: e.ActivityID, ActorID: e.ActorID,
				Tag: e.Tag, StatusCode: derr.StatusCode, Err: derr})
		}
		d.settle(ctx, j, host, driver.ResultFailed, number, derr)
		return
	}
	now := d.cfg.Now()
	delay, ok := d.cfg.Retry.Next(number)
	if !ok || (e.MaxAttempts > 0 && number >= e.MaxAttempts) {
		d.settle(ctx, j, host, driver.ResultGaveUp, number, gaveUp(ErrExhausted, derr))
		return
	}
	at := now.Add(delay)
	if !d.cfg.DisableWaitAsAsked {
		if derr.RetryAfter > 0 {
			if asked := now.Add(min(derr.RetryAfter, d.cfg.RetryAfterMax)); asked.After(at) {
				at = asked
			}
		}
		if derr.Until.After(at) {
			at = derr.Until
		}
	}
	if !e.Deadline.IsZero() && !at.Before(e.Deadline) {
		d.settle(ctx, j, host, driver.ResultGaveUp, number, gaveUp(ErrDeadline, derr))
		return
	}
	d.finish(ctx, j, driver.Outcome{RetryAt: at, Attempts: number})
}

func (d *Deliverer) attempt(ctx context.Context, j *driver.Job, host string, number int, a Attempt) {
	a.Inbox, a.Host, a.ActivityID, a.Tag, a.Number = j.Inbox, host, j.Envelope.ActivityID, j.Envelope.Tag, number
	d.recordAttempt(ctx, &a)
	if d.log.Enabled(ctx, slog.LevelDebug) {
		d.log.DebugContext(ctx, "deliver: attempt", "inbox", a.Inbox, "outcome", a.Outcome.String(), "status", a.StatusCode,
			"attempt", number, "duration", a.Duration, "scheme", a.Scheme.String(), "err", a.Err)
	}
	if d.cfg.OnAttempt != nil {
		d.cfg.OnAttempt(ctx, a)
	}
}

func (d *Deliverer) settle(ctx context.Context, j *driver.Job, host string, r driver.Result, attempts int, err error) {
	if d.cfg.OnSettled != nil {
		s := Settlement{Inbox: j.Inbox, Host: host, ActivityID: j.Envelope.ActivityID, Tag: j.Envelope.Tag,
			Result: r, Attempts: attempts}
		if err != nil {
			s.Err = err
		}
		d.cfg.OnSettled(ctx, s)
	}
	d.finish(ctx, j, driver.Outcome{Result: r, Attempts: attempts})
}

func (d *Deliverer) finish(ctx context.Context, j *driver.Job, o driver.Outcome) {
	// Record the outcome even when the work context was cancelled at the
	// end of the grace period.
	if err := d.queue.Finish(context.WithoutCancel(ctx), j.Ref(), o); err != nil {
		d.log.Warn("deliver: could not record outcome", "inbox", j.Inbox, "result", o.Result.String(), "err", err)
	}
}
