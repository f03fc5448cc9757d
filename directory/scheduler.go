package directory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Scheduler defaults.
const (
	// ObserveIntervalDefault is the longest the scheduler sleeps, so it sees
	// configuration and cross-process state changes within a minute.
	ObserveIntervalDefault = time.Minute
	// ReconcileTimeoutDefault is the fixed total deadline of one
	// reconciliation: status read, heartbeat, and the one permitted
	// register + final heartbeat, each under the client's 15 s cap.
	ReconcileTimeoutDefault = 90 * time.Second
)

// ErrSchedulerConfig is returned by NewScheduler, RunManual and
// AcquireLease for an unusable configuration (a missing file or relay, a
// renewal period not shorter than the lease).
var ErrSchedulerConfig = errors.New("directory: invalid scheduler configuration")

// Lifecycle is what the scheduler, manual commands and unregister need from
// a Directory client. *Client implements it.
type Lifecycle interface {
	Register(ctx context.Context, origin string, opts *CallOpts) (*Result, error)
	Heartbeat(ctx context.Context, origin string, opts *CallOpts) (*Result, error)
	Sync(ctx context.Context, origin string, opts *CallOpts) (*Result, error)
	Unregister(ctx context.Context, origin string, opts *CallOpts) (*Result, error)
	// ProfileDigest is the digest of the profile a register would send.
	ProfileDigest() string
}

var _ Lifecycle = (*Client)(nil)

// SchedulerConfig configures a Scheduler.
type SchedulerConfig struct {
	// ConfigFile is the regular YAML configuration file. It is re-read on
	// every wake; the scheduler sends traffic only while its
	// DIRECTORY_SCHEDULER_ENABLED is true, and only for enabled entries.
	// Required: environment-only activation is deliberately unsupported,
	// because the scheduler and unregister must share a durable
	// suppression source.
	ConfigFile string
	// Relay identifies this relay (its actor URL) for the stable jitter.
	// Required.
	Relay string
	// LeaseTTL is how long one lease grant lasts. Defaults to
	// LeaseTTLDefault (1 min).
	LeaseTTL time.Duration
	// LeaseRenew is how often the lease is renewed; shorter than LeaseTTL.
	// Defaults to LeaseRenewDefault (20 s).
	LeaseRenew time.Duration
	// ObserveInterval is the longest sleep between wakes. Defaults to
	// ObserveIntervalDefault.
	ObserveInterval time.Duration
	// ReconcileTimeout is the total deadline of one reconciliation.
	// Defaults to ReconcileTimeoutDefault.
	ReconcileTimeout time.Duration
	// Now is the clock. Defaults to time.Now. The Client and
	// MemoryStateStore handed to the Scheduler take it when they have no
	// Now of their own.
	Now func() time.Time
	// Logger receives operator diagnostics. Defaults to discarding.
	Logger *slog.Logger
	// DisableProfileReload stops the scheduler from handing the
	// DIRECTORY_PROFILE of each file it reads to the client (through a
	// SetProfile(Profile) error method, which *Client has). Set it only when
	// the client's profile comes from somewhere other than ConfigFile.
	// Defaults to false: the file's profile, normalised, is what the
	// scheduler registers and compares digests against, so an edit
	// registers without a restart and a digest another process stored for
	// that same profile is not re-sent.
	DisableProfileReload bool
	// TracerProvider receives a span per reconciliation, the parent of the
	// client's call spans (package doc, "Telemetry"). Defaults to OTel's
	// global provider, a no-op until the application installs one.
	TracerProvider trace.TracerProvider
	// MeterProvider receives the fedkit.directory.state gauge: the local
	// State of every configured Directory, as the scheduler last read it.
	// Defaults to OTel's global provider.
	MeterProvider metric.MeterProvider
}

// Scheduler keeps the relay's Directory registrations healthy. Start it in
// the one process meant to run it (the relay's server, never its workers)
// with Run. It never blocks startup: Run is meant for its own goroutine,
// and every Directory or store failure is logged and retried later.
type Scheduler struct {
	lc    Lifecycle
	store StateStore
	cfg   SchedulerConfig
	log   *slog.Logger

	tracer trace.Tracer
	gauge  metric.Registration // the state gauge's callback; nil if refused

	mu      sync.Mutex
	started time.Time
	pulsed  map[string]bool
	states  map[string]State // origin -> the state last read, for the gauge
}

// NewScheduler returns a Scheduler. It performs no I/O.
func NewScheduler(lc Lifecycle, store StateStore, cfg *SchedulerConfig) (*Scheduler, error) {
	if lc == nil || store == nil || cfg == nil {
		return nil, fmt.Errorf("%w: client, store and config are required", ErrSchedulerConfig)
	}
	c := *cfg
	if c.ConfigFile == "" {
		return nil, fmt.Errorf("%w: a regular YAML ConfigFile is required", ErrSchedulerConfig)
	}
	if c.Relay == "" {
		return nil, fmt.Errorf("%w: Relay is required", ErrSchedulerConfig)
	}
	lo, err := LeaseOpts{TTL: c.LeaseTTL, Renew: c.LeaseRenew}.withDefaults()
	if err != nil {
		return nil, err
	}
	c.LeaseTTL, c.LeaseRenew = lo.TTL, lo.Renew
	if c.ObserveInterval <= 0 {
		c.ObserveInterval = ObserveIntervalDefault
	}
	if c.ReconcileTimeout <= 0 {
		c.ReconcileTimeout = ReconcileTimeoutDefault
	}
	if c.Now == nil {
		c.Now = time.Now
	} else {
		adoptClock(lc, c.Now)
		adoptClock(store, c.Now)
	}
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Scheduler{lc: lc, store: store, cfg: c, log: log, states: map[string]State{}}
	s.instrument()
	return s, nil
}

// Run reconciles until ctx ends (wire it to SIGINT/SIGTERM): a startup pulse
// for every enabled entry, then each entry at its earliest persisted
// deadline, waking at least every ObserveInterval. A lease held at
// shutdown is released before Run returns. It returns ctx's error.
func (s *Scheduler) Run(ctx context.Context) error {
	defer s.stopGauge()
	s.mu.Lock()
	s.started = s.cfg.Now()
	s.pulsed = map[string]bool{}
	s.mu.Unlock()
	for {
		next := s.Tick(ctx)
		wait := min(max(next.Sub(s.cfg.Now()), 0), s.cfg.ObserveInterval)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Tick makes one pass over the configuration and returns the earliest
// deadline it knows of. Run calls it; tests and applications with their own
// loop may too (the first Tick after NewScheduler carries the startup pulse).
func (s *Scheduler) Tick(ctx context.Context) time.Time {
	s.mu.Lock()
	if s.pulsed == nil {
		s.started = s.cfg.Now()
		s.pulsed = map[string]bool{}
	}
	s.mu.Unlock()
	now := s.cfg.Now()
	next := now.Add(s.cfg.ObserveInterval)
	set, err := s.settings()
	if err != nil {
		s.log.Warn("directory scheduler: configuration unreadable; sending nothing", "err", err)
		return next
	}
	if !set.SchedulerEnabled {
		// Turning the gate off is durable suppression, not a failure.
		s.forgetStates(nil)
		return next
	}
	s.forgetStates(set.Directories)
	// Keep a client's own entry list in step with the file just read, so
	// it neither refuses a re-enabled entry nor serves a disabled one.
	if u, ok := s.lc.(interface{ SetDirectories([]Entry) error }); ok {
		if err := u.SetDirectories(set.Directories); err != nil {
			s.log.Warn("directory scheduler: entries not applied to the client", "err", err)
		}
	}
	// And its profile: a digest frozen at start would make a profile edit
	// invisible until a restart, and would make the scheduler undo an
	// operator's `directory sync` of the edited profile from another
	// process (it would see a digest it did not make and re-register the
	// old profile).
	if u, ok := s.lc.(interface{ SetProfile(Profile) error }); ok && !s.cfg.DisableProfileReload {
		if err := u.SetProfile(set.Profile); err != nil {
			s.log.Warn("directory scheduler: profile not applied to the client", "err", err)
		}
	}
	for _, e := range set.Directories {
		if ctx.Err() != nil {
			return next
		}
		if !e.Enabled {
			s.observe(e, StateRecord{})
			continue
		}
		if d := s.reconcile(ctx, e); !d.IsZero() && d.Before(next) {
			next = d
		}
	}
	return next
}

func (s *Scheduler) settings() (*Settings, error) {
	fi, err := os.Stat(s.cfg.ConfigFile)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: configuration is not a regular file", ErrSchedulerConfig)
	}
	b, err := os.ReadFile(s.cfg.ConfigFile)
	if err != nil {
		return nil, err
	}
	set, _, err := ParseConfig(b, nil)
	return set, err
}

// plan is what one Directory needs now.
type plan struct {
	due bool
	op  Operation // OpRegister or OpHeartbeat
	at  time.Time // when it is due (for the wake timer)
}

// decide applies the scheduling rules to a persisted record.
func (s *Scheduler) decide(rec StateRecord, origin string, now time.Time) plan {
	s.mu.Lock()
	pulse := !s.pulsed[origin]
	started := s.started
	s.mu.Unlock()
	if pulse && !rec.LastAttempt.IsZero() && !rec.LastAttempt.Before(started.Truncate(time.Second)) {
		// Another replica reconciled after we started: our pulse is served.
		pulse = false
		s.markPulsed(origin)
	}
	if rec.State == StateUnregisterPending {
		// An unregister is under way or failed remotely: nothing automatic
		// registers, not even a restart whose view of the configuration is
		// stale (a bind-mounted old inode still saying enabled: true). The
		// operator finishes the unregister or registers by hand.
		return plan{}
	}
	suppressed := rec.State == StateDisabled
	if suppressed && !pulse {
		// Another process unregistered this Directory; our view of the
		// configuration may be stale. Only a restart with the entry
		// enabled (the documented re-enable) registers it again.
		return plan{}
	}
	op := OpHeartbeat
	if !rec.Registered || suppressed || rec.ProfileDigest != s.lc.ProfileDigest() {
		op = OpRegister
	}
	at := now
	if op == OpHeartbeat && !pulse && rec.NextHeartbeat.After(at) {
		at = rec.NextHeartbeat
	}
	// No pulse or profile change bypasses a persisted failure deadline.
	if rec.RetryAt.After(at) {
		at = rec.RetryAt
	}
	return plan{due: !at.After(now), op: op, at: at}
}

func (s *Scheduler) markPulsed(origin string) {
	s.mu.Lock()
	s.pulsed[origin] = true
	s.mu.Unlock()
}

// reconcile handles one enabled Directory and returns its next deadline.
func (s *Scheduler) reconcile(ctx context.Context, e Entry) time.Time {
	origin := e.Origin
	log := s.log.With("directory", origin)
	rec, err := s.store.Load(ctx, origin)
	if err != nil {
		log.Warn("directory scheduler: state unavailable", "err", err)
		return time.Time{}
	}
	s.observe(e, rec)
	p := s.decide(rec, origin, s.cfg.Now())
	if !p.due {
		return p.at
	}
	lease, err := AcquireLease(ctx, s.store, origin, &LeaseOpts{TTL: s.cfg.LeaseTTL, Renew: s.cfg.LeaseRenew})
	if errors.Is(err, ErrLeaseHeld) {
		return time.Time{} // another replica owns this slot
	}
	if err != nil {
		log.Warn("directory scheduler: lease unavailable", "err", err)
		return time.Time{}
	}
	defer func() {
		if err := lease.Release(); err != nil && !errors.Is(err, ErrLeaseLost) {
			log.Warn("directory scheduler: lease release failed", "err", err)
		}
	}()
	// Re-read under the lease: the previous owner may have just served
	// this slot, and only one request per due slot may go out.
	rec, err = lease.Load(lease.Context())
	if err != nil {
		log.Warn("directory scheduler: state unavailable", "err", err)
		return time.Time{}
	}
	s.observe(e, rec)
	p = s.decide(rec, origin, s.cfg.Now())
	if !p.due {
		return p.at
	}
	sctx, span := s.startReconcile(lease.Context(), origin, p.op)
	rec = s.call(sctx, rec, origin, p.op, log)
	s.endReconcile(span, e, rec)
	s.markPulsed(origin)
	if ctx.Err() != nil || lease.Lost() {
		return time.Time{}
	}
	// Save with a context that survives the reconciliation deadline but not
	// shutdown; the lease token fences it either way.
	sctx, cancel := context.WithTimeout(ctx, stateWriteTimeout)
	defer cancel()
	if err := lease.Save(sctx, rec); err != nil {
		if errors.Is(err, ErrLeaseLost) {
			log.Warn("directory scheduler: lease lost; a newer owner's state stands")
		} else {
			log.Warn("directory scheduler: state write failed", "err", err)
		}
		return time.Time{}
	}
	s.observe(e, rec)
	return s.decide(rec, origin, s.cfg.Now()).at
}

// call performs op under the lease (leaseCtx is its context) and returns
// the record to persist.
func (s *Scheduler) call(leaseCtx context.Context, rec StateRecord, origin string, op Operation, log *slog.Logger) StateRecord {
	ctx, cancel := context.WithTimeout(leaseCtx, s.cfg.ReconcileTimeout)
	defer cancel()
	once := &CallOpts{MaxAttempts: 1, MaxRetryWait: -1}
	var res *Result
	var err error
	if op == OpRegister {
		res, err = s.lc.Register(ctx, origin, once)
	} else {
		res, err = s.lc.Heartbeat(ctx, origin, once)
		// A higher advertised protocol than the one last registered under
		// (after an earlier fallback) gets one register under it.
		if err == nil && !res.Reconciled && rec.Protocol != 0 && res.Version > rec.Protocol {
			log.Info("directory scheduler: higher protocol advertised; registering", "from", rec.Protocol, "to", res.Version)
			hb := res
			res, err = s.lc.Register(ctx, origin, &CallOpts{Version: hb.Version, MaxAttempts: 1, MaxRetryWait: -1})
			if err != nil {
				// The heartbeat itself succeeded; keep that, and let the
				// register failure drive the retry.
				rec = s.succeeded(rec, origin, hb)
				op = OpRegister
			}
		}
	}
	if err != nil {
		return s.failed(rec, origin, op, err, log)
	}
	return s.succeeded(rec, origin, res)
}

// Operator-facing classification of a failed call, closed values only.
func diagnose(err error) (Diagnostic, ErrorCode) {
	var re *ResponseError
	var ie *InvalidResponseError
	var te *TransportError
	switch {
	case errors.Is(err, ErrLifecycleOff):
		return DiagStatus, CodeLifecycleUnavailable
	case errors.As(err, &re):
		return DiagDirectory, re.Code
	case errors.As(err, &ie):
		if ie.Reason == ReasonStatusDoc || ie.Reason == ReasonStatusBaseURL {
			return DiagStatus, ""
		}
		return DiagInvalidResponse, ""
	case errors.As(err, &te):
		if te.Timeout {
			return DiagTimeout, ""
		}
		return DiagTransport, ""
	case errors.Is(err, context.DeadlineExceeded):
		return DiagTimeout, ""
	}
	return DiagLocal, ""
}

// succeeded records a success at the scheduler's own clock, so every
// persisted deadline uses one time source even when the client was given
// another.
func (s *Scheduler) succeeded(rec StateRecord, origin string, res *Result) StateRecord {
	return recordSuccess(rec, res, s.lc.ProfileDigest(), s.cfg.Relay, origin, s.cfg.Now())
}

// recordSuccess is rec after res completed at done, for the scheduler and
// manual commands alike: registered, the next heartbeat a day (plus jitter)
// away, failures forgotten, and after any register (a reconciliation's
// included) the protocol and profile digest it registered.
func recordSuccess(rec StateRecord, res *Result, digest, relay, origin string, done time.Time) StateRecord {
	rec.State = StateRegistered
	rec.Registered = true
	if res.Operation == OpRegister || res.Reconciled || res.RegisterOutcome != "" {
		rec.Protocol = res.Version
		rec.ProfileDigest = digest
		if res.ProfileDigest != "" {
			rec.ProfileDigest = res.ProfileDigest
		}
	}
	rec.LastAttempt, rec.LastSuccess = done, done
	rec.NextHeartbeat = ceilSecond(NextHeartbeatAfter(done, relay, origin))
	rec.RetryAt = time.Time{}
	rec.Attempts = 0
	rec.Operation, rec.Outcome = res.Operation, res.Outcome
	rec.Code, rec.Diagnostic = "", DiagNone
	return rec
}

func (s *Scheduler) failed(rec StateRecord, origin string, op Operation, err error, log *slog.Logger) StateRecord {
	done := s.cfg.Now() // delays run from the completion of the operation
	rec.Attempts = min(rec.Attempts+1, MaxAttempts)
	rec.LastAttempt = done
	rec.Operation, rec.Outcome = op, ""
	rec.Diagnostic, rec.Code = diagnose(err)
	rec.State = StateRetrying
	switch ClassOf(err) {
	case ClassRetryable:
		rec.RetryAt = ceilSecond(done.Add(RetryDelay(s.cfg.Relay, origin, rec.Attempts, RetryAfterOf(err))))
	case ClassReconcile:
		// The final heartbeat of a reconciliation still found no
		// registration: forget it, so the next interval registers.
		rec.Registered = false
		rec.RetryAt = ceilSecond(NextHeartbeatAfter(done, s.cfg.Relay, origin))
	default:
		// Authentication, enrollment, suspension, lifecycle and malformed
		// responses are reconsidered on the next daily interval.
		rec.RetryAt = ceilSecond(NextHeartbeatAfter(done, s.cfg.Relay, origin))
	}
	log.Warn("directory scheduler: lifecycle failure", "operation", op, "diagnostic", rec.Diagnostic,
		"code", rec.Code, "attempts", rec.Attempts, "retry_at", rec.RetryAt)
	return rec
}
