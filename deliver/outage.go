package deliver

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
)

// Bounds of Run's wait between claims while the queue fails.
const (
	outageBackoffMin = 250 * time.Millisecond
	outageBackoffMax = 5 * time.Second
)

// outage is Run's memory of a queue whose claims fail, as a database that
// went away makes them. While claims fail, Run waits between them from
// PollInterval (at most outageBackoffMin) doubling up to outageBackoffMax,
// and drops the Notifier's wake-ups (down): a Notifier that cannot reach its
// store wakes its caller at every retry, which would turn the backoff back
// into a poll. A wake-up from this process's own Send still ends the wait:
// its Enqueue just succeeded, so the queue answers. It
// logs one error when the failures begin and one line when a claim
// succeeds again, not one per claim. Any claim error counts, not only
// ErrQueueUnavailable: a queue that keeps failing for another reason (a
// schema not migrated) deserves the same patience and the same quiet.
type outage struct {
	log   *slog.Logger
	poll  time.Duration
	since time.Time // when the failures began, on Config.Now
	fails int       // claims failed in a row; 0 when the queue answers
	wait  time.Duration
	down  atomic.Bool // fails > 0, for the Notifier's goroutine
}

// claimed records the error of one Claim made at now. A claim cut short by
// the end of Run (ctx done) is not the queue's failure.
func (o *outage) claimed(ctx context.Context, err error, now time.Time) {
	if ctx.Err() != nil {
		return
	}
	if err == nil {
		if o.fails > 0 {
			o.log.Info("deliver: queue answers again; claiming", "outage", now.Sub(o.since), "failed_claims", o.fails)
		}
		o.fails = 0
		o.down.Store(false)
		return
	}
	if o.fails == 0 {
		o.since = now
		o.wait = min(o.poll, outageBackoffMin)
		o.log.Error("deliver: claim failed; backing off until the queue answers", "err", err,
			"unavailable", errors.Is(err, driver.ErrQueueUnavailable))
	} else {
		o.wait = min(2*o.wait, outageBackoffMax)
	}
	o.fails++
	o.down.Store(true)
}

// pause is how long Run waits before its next claim when it is not busy.
func (o *outage) pause() time.Duration {
	if o.fails > 0 {
		return o.wait
	}
	return o.poll
}
