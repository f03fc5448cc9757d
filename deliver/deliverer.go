package deliver

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver/colsync"
	"github.com/fedkit/fedkit/sig"
)

// Deliverer defaults.
const (
	// ConcurrencyDefault is how many deliveries Run has in flight at once.
	// Nearly all of them wait on a remote, which costs no CPU: on the
	// fediverse an inbox answers after 50-500 ms, and a few percent of
	// servers hold a request until it times out, so reaching the sign bound
	// of two cores (2,600 RSA signatures a second) at 300 ms takes some 800
	// healthy requests in flight besides those the sick hosts hold.
	ConcurrencyDefault = 2048
	// LeaseDefault is how long a claim reserves a delivery.
	LeaseDefault = 5 * time.Minute
	// AttemptTimeoutDefault bounds one attempt, both knocks and signing
	// included: two of the client's default 30 s requests.
	AttemptTimeoutDefault = 60 * time.Second
	// PollIntervalDefault is how often an idle Run looks for due work.
	PollIntervalDefault = time.Second
	// ShutdownGraceDefault bounds how long Run lets deliveries in flight
	// finish once its context ends.
	ShutdownGraceDefault = 30 * time.Second
	// RetryAfterMaxDefault caps how long a Retry-After can push a retry back.
	RetryAfterMaxDefault = 6 * time.Hour
	// ContentTypeDefault is the Content-Type of a delivery, as Mastodon sends.
	ContentTypeDefault = "application/activity+json"
)

// FollowersSource tells the deliverer a sender's followers on one server,
// for FEP-8fcf Collection-Synchronization. The application implements it,
// typically as a query over its follows table.
type FollowersSource interface {
	// FollowersOn returns actorID's followers collection, the URL listing
	// its followers on the server at origin ("https://host[:port]"), and
	// those followers' IDs. A zero CollectionID sends no header.
	FollowersOn(ctx context.Context, actorID, origin string) (colsync.Followers, error)
}

// Config configures a Deliverer. A nil *Config means DefaultConfig().
type Config struct {
	// Retry is the retry schedule. Defaults to the zero RetryPolicy:
	// RetryBaseDefault (30 s) doubling to RetryMaxDelayDefault (1 h),
	// RetryAttemptsDefault (12) attempts.
	Retry RetryPolicy
	// DisableWaitAsAsked turns the WaitAsAsked rule off: by default a retry
	// waits at least what Retry-After asked (capped at RetryAfterMax), and a
	// held delivery at least until its breaker's cool-off ends. Retry-After
	// is honoured on every retryable response, not only the 429 and 503 it
	// is defined for, since a server that sends it with a 500 or 408 is
	// asking the same thing; it never shortens the policy's wait, and a
	// retry it pushes past the batch deadline is given up at once. Defaults
	// to false (wait as asked).
	DisableWaitAsAsked bool
	// RetryAfterMax caps a Retry-After. Defaults to RetryAfterMaxDefault.
	RetryAfterMax time.Duration
	// Permanent says which statuses are refusals for good. Defaults to
	// DefaultPermanent (every 4xx but 408 and 429); MastodonPermanent is
	// Mastodon's rule.
	Permanent func(status int) bool
	// PermanentIfSenderGone lists statuses that are permanent when
	// SenderKeys.Gone says the sender is gone for good (Mastodon: 401).
	// Defaults to none.
	PermanentIfSenderGone []int
	// Breaker configures the circuit breaker. Defaults to the zero
	// BreakerConfig (BreakerThresholdDefault failures in a row hold a host
	// for BreakerCoolOffDefault), also when nil, so a Config built by hand
	// keeps the breaker; DisableBreaker turns it off.
	Breaker *BreakerConfig
	// DisableBreaker turns the circuit breaker off: every delivery is sent
	// however often its host failed. Defaults to false (breaker on).
	DisableBreaker bool
	// PerHost is how many deliveries may be in flight to one host; ignored
	// when HostLimiter is set. Defaults to PerHostDefault.
	PerHost int
	// HostLimiter, when set, is the per-host limit shared with other
	// Deliverers. Defaults to one of this Deliverer's own.
	HostLimiter *HostLimiter
	// Concurrency is how many claimed deliveries Run has in flight at once,
	// nearly all of them waiting on a remote; it bounds memory, not CPU
	// (signing is bounded by the cores on its own). A delivery waiting for
	// its host's PerHost slot does not count: it lends its place to a
	// delivery to another host. Defaults to ConcurrencyDefault.
	Concurrency int
	// Lease is how long a claimed delivery is reserved for this process. It
	// must outlast the longest attempt: a delivery whose lease has less
	// than AttemptTimeout left when its host is free goes back to the queue
	// unsent. Defaults to LeaseDefault.
	Lease time.Duration
	// AttemptTimeout bounds one attempt, both knocks included, so that no
	// request outlives its lease; it is at most half the Lease. A timeout
	// is a failure of the host (a tarpit's count towards its breaker).
	// Defaults to AttemptTimeoutDefault.
	AttemptTimeout time.Duration
	// PollInterval is how often Run looks for due deliveries when idle.
	// Defaults to PollIntervalDefault.
	PollInterval time.Duration
	// ShutdownGrace bounds how long Run waits for deliveries in flight once
	// its context ends. Defaults to ShutdownGraceDefault.
	ShutdownGrace time.Duration
	// FirstScheme is the signature scheme tried first for a host with none
	// remembered. Defaults to the key's: sig.SchemeRFC9421 for an Ed25519
	// key (Fedify's draft-cavage verifier is RSA-only and answers an
	// Ed25519 cavage signature with 500), sig.SchemeCavage for the rest.
	FirstScheme sig.Scheme
	// Schemes remembers per host which scheme worked. Defaults to a
	// NewMemorySchemeStore(SchemeMemoryMaxDefault).
	Schemes SchemeStore
	// ReprobeAfter is how long a host remembered as draft-cavage keeps it
	// before one ordinary delivery tries RFC 9421 again, so that a host
	// that upgrades (Mastodon 4.5 reads RFC 9421) moves to it. It needs a
	// Schemes store that keeps dates (a sig.LearnedSchemeStore, as the
	// default is). Defaults to ReprobeAfterDefault.
	ReprobeAfter time.Duration
	// DisableReprobe keeps a host's remembered scheme for good. Defaults
	// to false (re-probe after ReprobeAfter).
	DisableReprobe bool
	// DisableNegotiation ignores Accept-Signature: the second knock is
	// always the other scheme. Defaults to false (a refusal's
	// Accept-Signature says how the second knock signs).
	DisableNegotiation bool
	// PriorityMaxInboxes, when above zero, puts a send to at most this many
	// inboxes in the priority lane unless its Batch says low priority.
	// Defaults to 0 (only Batch.Priority does).
	PriorityMaxInboxes int
	// Followers provides FEP-8fcf data for batches sent with
	// SynchronizeCollection. Defaults to nil: no header is sent.
	Followers FollowersSource
	// ContentType is the Content-Type of a delivery. Defaults to
	// ContentTypeDefault.
	ContentType string

	// OnAttempt sees every attempt: delivered, failed or held. Defaults to
	// nil.
	OnAttempt func(ctx context.Context, a Attempt)
	// OnFailure sees every permanent refusal, with its status. Defaults to
	// nil.
	OnFailure func(ctx context.Context, f Failure)
	// OnSettled is awaited for each delivery that is done with, before it
	// leaves the queue. Defaults to nil.
	OnSettled func(ctx context.Context, s Settlement)
	// SkipIf, when it returns true for a delivery coming due, drops it
	// unsent (settled as skipped). Defaults to nil: nothing is skipped.
	SkipIf func(ctx context.Context, inbox string, e *Envelope) bool
	// Availability is the rule that skips hosts gone for days (see the
	// package doc). Defaults to the zero AvailabilityConfig: a host failing
	// on AvailabilityDaysDefault (7) distinct days with no success is
	// skipped until seen alive, remembered in memory.
	Availability AvailabilityConfig
	// DisableAvailability turns the availability rule off: every host is
	// tried however long it has failed. Defaults to false (rule on).
	DisableAvailability bool

	// TracerProvider receives a span per SendBatch (deliver.enqueue) and
	// per attempt (deliver.attempt), linked to the span that queued it.
	// Defaults to OpenTelemetry's global provider, a no-op until the
	// application installs one.
	TracerProvider trace.TracerProvider
	// MeterProvider receives the deliveries counter, the attempt duration
	// histogram and, while Run runs, the queue depth and breakers-open
	// gauges (package doc, "Telemetry"). Defaults to OpenTelemetry's global
	// provider, a no-op until the application installs one.
	MeterProvider metric.MeterProvider
	// MetricHosts adds server.address, the inbox's host, to the deliveries
	// counter and the duration histogram: one series per host delivered
	// to, which only an operator who knows their peers are few should
	// want. Defaults to false (no hosts on metrics).
	MetricHosts bool

	// Logger receives logs. Defaults to discarding.
	Logger *slog.Logger
	// Now returns the current time. Defaults to time.Now.
	Now func() time.Time
}

// DefaultConfig returns the defaults, as a nil or zero Config means them,
// with Breaker set so that its fields can be edited in place
// (cfg.Breaker.Store = ...).
func DefaultConfig() *Config { return &Config{Breaker: &BreakerConfig{}} }

// Batch says how a send is to be delivered.
type Batch struct {
	// Tag names the batch for Status and OnSettled.
	Tag string
	// Deadline, when set, is when a delivery is given up rather than retried.
	Deadline time.Time
	// MaxAttempts, when above zero, lowers the retry policy's attempts.
	MaxAttempts int
	// LowPriority puts the batch in the low lane, claimed only when nothing
	// else is due.
	LowPriority bool
	// Priority puts the batch in the priority lane, ahead of the normal one.
	// LowPriority wins when both are set.
	Priority bool
	// OrderingKey makes the batch reach each inbox in the order it was
	// queued among batches with this key. Give the activity's object: its
	// Delete then waits until its Create is delivered or given up.
	OrderingKey string
	// SynchronizeCollection adds an FEP-8fcf Collection-Synchronization
	// header, from Config.Followers.
	SynchronizeCollection bool
}

// AttemptOutcome is what became of one attempt.
type AttemptOutcome int8

const (
	// AttemptDelivered: the inbox accepted it.
	AttemptDelivered AttemptOutcome = iota + 1
	// AttemptFailed: it was sent and not accepted, or could not be sent.
	AttemptFailed
	// AttemptHeld: the circuit breaker held it back unsent.
	AttemptHeld
)

// String returns "delivered", "failed" or "held".
func (o AttemptOutcome) String() string {
	switch o {
	case AttemptDelivered:
		return "delivered"
	case AttemptHeld:
		return "held"
	default:
		return "failed"
	}
}

// Attempt describes one attempt, for Config.OnAttempt.
type Attempt struct {
	// Inbox is the destination and Host its host (the breaker's and the
	// limiter's key).
	Inbox, Host string
	// ActivityID is the activity's "id".
	ActivityID string
	// Tag is the batch's tag.
	Tag string
	// Number counts attempts from 1; held ones count.
	Number int
	// Outcome says whether it was delivered, failed or held.
	Outcome AttemptOutcome
	// StatusCode is the final response's status, or 0.
	StatusCode int
	// Duration is the time spent sending, signing included.
	Duration time.Duration
	// Scheme signed the final request; 0 when nothing was sent.
	Scheme sig.Scheme
	// Probe says the breaker let this one through as its probe.
	Probe bool
	// Err is a *DeliveryError unless delivered.
	Err error
}

// Failure describes a permanent refusal, for Config.OnFailure.
type Failure struct {
	// Inbox is the destination that refused and Host its host, which an
	// application may mark unavailable.
	Inbox, Host string
	// ActivityID and ActorID are the activity's "id" and "actor".
	ActivityID string
	ActorID    string
	// Tag is the batch's tag.
	Tag string
	// StatusCode is the refusing status, or 0 when the client refused to
	// send (a blocked address, a redirect).
	StatusCode int
	// Err is the refusal, of KindPermanent.
	Err *DeliveryError
}

// Settlement describes a delivery that is done with, for Config.OnSettled.
type Settlement struct {
	// Inbox is the destination and Host its host.
	Inbox, Host string
	// ActivityID is the activity's "id".
	ActivityID string
	// Tag is the batch's tag, for following a batch.
	Tag string
	// Result is how the delivery ended.
	Result Result
	// Attempts counts the attempts made, held ones included.
	Attempts int
	// Err says why it was not delivered; nil when it was.
	Err error
}

// Deliverer sends activities through a Queue. Its methods are safe for
// concurrent use; Run may be called by several processes sharing a Queue.
type Deliverer struct {
	queue   Queue
	keys    SenderKeys
	client  *client.Client
	cfg     Config
	limiter *HostLimiter
	log     *slog.Logger
	wake    chan struct{}

	signersMu sync.Mutex
	signers   map[string]signerEntry
	// signTurns bounds concurrent signatures to the cores: signing is pure
	// CPU, and more signers than cores only add preemption. It serves the
	// hosts with the longest backlog first (signturns.go).
	signTurns *signTurns
	// negotiated keeps the signature each host asked for with
	// Accept-Signature and then accepted (negotiate.go).
	negotiated negotiatedShapes

	tel telemetry
}

type signerEntry struct {
	key    crypto.Signer
	signer *sig.Signer
}

// signersMax bounds the signer cache; past it the cache starts afresh.
const signersMax = 1024

// signerFor returns a Signer for key, reused while keyID names the same key.
// Building one under the lock also keeps sig's one-time key preparation
// (RSA precomputation) from running concurrently on a shared key.
func (d *Deliverer) signerFor(keyID string, key crypto.Signer) (*sig.Signer, error) {
	d.signersMu.Lock()
	defer d.signersMu.Unlock()
	if e, ok := d.signers[keyID]; ok && sameKey(e.key, key) {
		return e.signer, nil
	}
	s, err := sig.NewSigner(key, keyID, &sig.SignerConfig{Now: d.cfg.Now})
	if err != nil {
		return nil, err
	}
	if d.signers == nil || len(d.signers) >= signersMax {
		d.signers = make(map[string]signerEntry)
	}
	d.signers[keyID] = signerEntry{key: key, signer: s}
	return s, nil
}

func sameKey(a, b crypto.Signer) bool {
	pa, ok := a.Public().(interface{ Equal(crypto.PublicKey) bool })
	return ok && pa.Equal(b.Public())
}

// New returns a Deliverer sending through c, the guarded client, with keys
// from keys. A nil cfg means DefaultConfig().
func New(queue Queue, keys SenderKeys, c *client.Client, cfg *Config) (*Deliverer, error) {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	d := &Deliverer{queue: queue, keys: keys, client: c, cfg: *cfg, wake: make(chan struct{}, 1),
		signTurns: newSignTurns(runtime.GOMAXPROCS(0))}
	if queue == nil || keys == nil || c == nil {
		return nil, invalid("queue, keys and client are required")
	}
	x := &d.cfg
	if x.RetryAfterMax <= 0 {
		x.RetryAfterMax = RetryAfterMaxDefault
	}
	if x.Permanent == nil {
		x.Permanent = DefaultPermanent
	}
	if x.DisableBreaker {
		x.Breaker = nil
	} else {
		var b BreakerConfig
		if x.Breaker != nil {
			b = *x.Breaker
		}
		if b.Threshold <= 0 {
			b.Threshold = BreakerThresholdDefault
		}
		if b.CoolOff <= 0 {
			b.CoolOff = BreakerCoolOffDefault
		}
		if b.Store == nil {
			b.Store = &MemoryBreakerStore{}
		}
		x.Breaker = &b
	}
	if x.HostLimiter == nil {
		x.HostLimiter = NewHostLimiter(x.PerHost)
	}
	d.limiter = x.HostLimiter
	if x.Concurrency <= 0 {
		x.Concurrency = ConcurrencyDefault
	}
	if x.Lease <= 0 {
		x.Lease = LeaseDefault
	}
	if x.AttemptTimeout <= 0 {
		x.AttemptTimeout = AttemptTimeoutDefault
	}
	x.AttemptTimeout = min(x.AttemptTimeout, x.Lease/2)
	if x.PollInterval <= 0 {
		x.PollInterval = PollIntervalDefault
	}
	if x.ShutdownGrace <= 0 {
		x.ShutdownGrace = ShutdownGraceDefault
	}
	switch x.FirstScheme {
	case 0, sig.SchemeCavage, sig.SchemeRFC9421:
	default:
		return nil, invalid("unknown FirstScheme %d", x.FirstScheme)
	}
	if x.Schemes == nil {
		x.Schemes = NewMemorySchemeStore(SchemeMemoryMaxDefault)
	}
	if !x.DisableAvailability {
		fillAvailability(&x.Availability)
	}
	if x.ReprobeAfter <= 0 {
		x.ReprobeAfter = ReprobeAfterDefault
	}
	if x.ContentType == "" {
		x.ContentType = ContentTypeDefault
	}
	if x.Now == nil {
		x.Now = time.Now
	}
	d.log = x.Logger
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	d.instrument()
	return d, nil
}

// Send queues activity for each inbox under the default Batch.
func (d *Deliverer) Send(ctx context.Context, keyID string, activity []byte, inboxes []string) error {
	return d.SendBatch(ctx, keyID, activity, inboxes, Batch{})
}

// SendBatch queues activity, a JSON object, for each inbox, signed with the
// key keyID names. Duplicate inboxes are sent once; inboxes that are not
// absolute http(s) URLs the client accepts are left out and logged. It
// returns ErrNoInboxes when none is left.
func (d *Deliverer) SendBatch(ctx context.Context, keyID string, activity []byte, inboxes []string, b Batch) error {
	var head struct {
		ID    string          `json:"id"`
		Actor json.RawMessage `json:"actor"`
	}
	if err := json.Unmarshal(activity, &head); err != nil || !bytes.HasPrefix(bytes.TrimSpace(activity), []byte("{")) {
		return ErrNotJSON
	}
	e := &Envelope{
		KeyID:                 keyID,
		ActivityID:            head.ID,
		ActorID:               actorID(head.Actor),
		Body:                  bytes.Clone(activity),
		Inboxes:               d.cleanInboxes(inboxes),
		EnqueuedAt:            d.cfg.Now(),
		Tag:                   b.Tag,
		Deadline:              b.Deadline,
		MaxAttempts:           b.MaxAttempts,
		OrderingKey:           b.OrderingKey,
		SynchronizeCollection: b.SynchronizeCollection,
	}
	if len(e.Inboxes) == 0 {
		return ErrNoInboxes
	}
	switch {
	case b.LowPriority:
		e.Lane = LaneLow
	case b.Priority, d.cfg.PriorityMaxInboxes > 0 && len(e.Inboxes) <= d.cfg.PriorityMaxInboxes:
		e.Lane = LanePriority
	}
	ctx, span := d.startEnqueue(ctx, e)
	err := d.queue.Enqueue(ctx, e)
	endSpan(span, err)
	if err != nil {
		return err
	}
	select {
	case d.wake <- struct{}{}:
	default:
	}
	return nil
}

func actorID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.ID
	}
	return ""
}

// cleanInboxes drops duplicates and URLs the client would refuse, keeping
// the caller's order.
func (d *Deliverer) cleanInboxes(inboxes []string) []string {
	seen := make(map[string]struct{}, len(inboxes))
	out := make([]string, 0, len(inboxes))
	for _, raw := range inboxes {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
			d.log.Warn("deliver: inbox left out", "inbox", raw)
			continue
		}
		u.Scheme = strings.ToLower(u.Scheme)
		u.Host = strings.ToLower(u.Host)
		u.Fragment = ""
		s := u.String()
		if _, dup := seen[s]; dup {
			continue
		}
		if err := d.client.ValidateURL(s); err != nil {
			d.log.Warn("deliver: inbox left out", "inbox", raw, "err", err)
			continue
		}
		seen[s] = struct{}{}
		out = append(out, s)
	}
	return out
}

// Status reports how the batch tagged tag stands.
func (d *Deliverer) Status(ctx context.Context, tag string) (BatchStatus, error) {
	return d.queue.Status(ctx, tag)
}

// Drop removes queued deliveries f selects, such as a deleted account's or
// an undone post's, and returns how many.
func (d *Deliverer) Drop(ctx context.Context, f DropFilter) (int, error) {
	return d.queue.Drop(ctx, f)
}

// Run works the queue until ctx ends, then lets the deliveries in flight
// finish, for at most ShutdownGrace, before it returns; deliveries claimed
// but not yet started go back to the queue. A delivery still in flight when
// the grace period ends is cut off and goes back to the queue due at once,
// with no attempt counted and no breaker failure recorded: a shutdown is
// not the remote's fault (the remote may have received it, so a delivery
// is at least once). It returns nil after a shutdown and an error only when
// it could not start.
func (d *Deliverer) Run(ctx context.Context) error {
	// Sends in flight outlive ctx by the grace period.
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	defer d.startGauges()()
	slots := make(chan struct{}, d.cfg.Concurrency)
	waiters := make(chan struct{}, waitersPerSlot*d.cfg.Concurrency)
	gate := newCPUGate(signBacklogPerCore * runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	out := &outage{log: d.log, poll: d.cfg.PollInterval}
	if n, ok := d.queue.(Notifier); ok {
		notified := make(chan struct{})
		defer func() { <-notified }() // after ctx ends, so Notify has returned
		go func() {
			defer close(notified)
			err := n.Notify(ctx, func() {
				if out.down.Load() {
					return // a Notifier's retries during an outage are no news
				}
				select {
				case d.wake <- struct{}{}:
				default:
				}
			})
			if err != nil && ctx.Err() == nil {
				d.log.Warn("deliver: queue notifications stopped; polling only", "err", err)
			}
		}()
	}
	timer := time.NewTimer(d.cfg.PollInterval)
	timer.Stop()
	defer timer.Stop()
loop:
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			break loop
		}
		// Claim only while the signers' line is short: deliveries waiting
		// on the network, not on the CPU, are what Concurrency is for.
		for gate.free() <= 0 {
			select {
			case <-gate.room:
			case <-ctx.Done():
				<-slots
				break loop
			}
		}
		free := 1
		for free < d.cfg.Concurrency && free < gate.free() {
			select {
			case slots <- struct{}{}:
				free++
				continue
			default:
			}
			break
		}
		jobs, err := d.queue.Claim(ctx, ClaimOpts{Now: d.cfg.Now(), Lease: d.cfg.Lease, Limit: free})
		out.claimed(ctx, err, d.cfg.Now())
		for range free - len(jobs) {
			<-slots
		}
		gate.enter(len(jobs))
		for _, j := range jobs {
			wg.Go(func() {
				rs := &runSlot{slots: slots, waiters: waiters, held: true, gate: gate, ahead: true}
				defer rs.done()
				d.handle(work, ctx, j, rs)
			})
		}
		if len(jobs) == free && err == nil {
			continue
		}
		timer.Reset(out.pause())
		select {
		case <-timer.C:
		case <-d.wake:
			timer.Stop()
		case <-ctx.Done():
			break loop
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	grace := time.NewTimer(d.cfg.ShutdownGrace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
		d.log.Warn("deliver: shutdown grace ended with deliveries in flight; cutting them off")
		cancelWork()
		<-done
	}
	return nil
}

// RunDue works every delivery due now, waiting for each, and returns how
// many it handled: for tests, and for applications that deliver from a
// scheduled job rather than a long-running Run. Cancelling ctx cuts off the
// deliveries in flight, as the end of Run's grace period does, and RunDue
// returns ctx's error.
func (d *Deliverer) RunDue(ctx context.Context) (int, error) {
	n := 0
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		jobs, err := d.queue.Claim(ctx, ClaimOpts{Now: d.cfg.Now(), Lease: d.cfg.Lease, Limit: d.cfg.Concurrency})
		if err != nil {
			return n, err
		}
		if len(jobs) == 0 {
			return n, nil
		}
		var wg sync.WaitGroup
		for _, j := range jobs {
			wg.Go(func() { d.handle(ctx, ctx, j, nil) })
		}
		wg.Wait()
		n += len(jobs)
	}
}

// waitersPerSlot bounds, per unit of Concurrency, the claimed deliveries Run
// keeps waiting for a busy host without a slot of their own.
const waitersPerSlot = 4

// runSlot is one of Run's Concurrency slots, held by a delivery. A delivery
// that must wait for its host parks: it lends its slot back to Run, so
// deliveries to other hosts are claimed meanwhile, and takes a slot again
// before it sends.
type runSlot struct {
	slots, waiters chan struct{}
	held           bool
	// gate counts the delivery while it is ahead of its signature and not
	// waiting for its host (ahead).
	gate  *cpuGate
	ahead bool
}

// waiting takes the delivery out of the signers' line while it waits for
// its host, or for good once it is signed or done; nil-safe.
func (r *runSlot) waiting() {
	if r != nil && r.ahead {
		r.ahead = false
		r.gate.leave()
	}
}

// back puts a delivery that waited for its host back in the line.
func (r *runSlot) back() {
	if r != nil && !r.ahead {
		r.ahead = true
		r.gate.enter(1)
	}
}

// park gives the slot back if a waiting place is free.
func (r *runSlot) park() bool {
	select {
	case r.waiters <- struct{}{}:
		<-r.slots
		r.held = false
		return true
	default:
		return false
	}
}

// unpark leaves the waiting place and takes a slot again.
func (r *runSlot) unpark(stop context.Context) error {
	<-r.waiters
	select {
	case r.slots <- struct{}{}:
		r.held = true
		return nil
	case <-stop.Done():
		return stop.Err()
	}
}

func (r *runSlot) done() {
	r.waiting()
	if r.held {
		<-r.slots
	}
}

// acquireHost waits for a slot for host, parking rs meanwhile when it can.
func (d *Deliverer) acquireHost(stop context.Context, host string, rs *runSlot) (func(), error) {
	if release, ok := d.limiter.TryAcquire(host); ok {
		return release, nil
	}
	rs.waiting()
	defer rs.back()
	if rs == nil || !rs.park() {
		return d.limiter.Acquire(stop, host)
	}
	release, err := d.limiter.Acquire(stop, host)
	if uerr := rs.unpark(stop); uerr != nil && err == nil {
		release()
		return nil, uerr
	}
	return release, err
}

func hostOf(inbox string) string {
	u, err := url.Parse(inbox)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}

// handle makes one attempt at j. work bounds the sending; stop, when it ends
// before a host slot is free, returns j to the queue untouched.
func (d *Deliverer) handle(work, stop context.Context, j *Job, rs *runSlot) {
	e := j.Envelope
	host := hostOf(j.Inbox)
	number := j.Attempts + 1
	now := d.cfg.Now()

	if !e.Deadline.IsZero() && !now.Before(e.Deadline) {
		d.settle(work, j, host, ResultGaveUp, j.Attempts, &DeliveryError{Kind: KindDeadline, Inbox: j.Inbox})
		return
	}
	if d.cfg.SkipIf != nil && d.cfg.SkipIf(work, j.Inbox, e) {
		d.settle(work, j, host, ResultSkipped, j.Attempts, &DeliveryError{Kind: KindSkipped, Inbox: j.Inbox})
		return
	}
	if d.skipUnavailable(work, j, host) {
		return
	}

	release, err := d.acquireHost(stop, host, rs)
	if err != nil {
		// Shutting down: leave it for the next claim, attempts unchanged.
		d.finish(work, j, Outcome{RetryAt: now, Attempts: j.Attempts})
		return
	}
	defer release()
	if stop.Err() != nil {
		// A slot came free only after the stop: this one was not in flight.
		d.finish(work, j, Outcome{RetryAt: now, Attempts: j.Attempts})
		return
	}
	if j.LeaseUntil.Sub(d.cfg.Now()) < d.cfg.AttemptTimeout {
		// Waited for a slot until its lease could lapse mid-request, when
		// another process may claim and send it too: do not send; give it
		// back while it is still ours.
		d.finish(work, j, Outcome{RetryAt: now, Attempts: j.Attempts})
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
		d.failed(work, j, host, number, &DeliveryError{Kind: KindRetryable, Inbox: j.Inbox, Err: err}, Attempt{}, false)
		return
	}

	var adm Admission
	light := host
	if b := d.cfg.Breaker; b != nil {
		if b.PerInbox {
			light = j.Inbox
		}
		adm, err = b.Store.Admit(work, light, d.cfg.Now(), d.rule())
		if err != nil {
			// A breaker store that cannot answer must not stop delivery.
			d.log.Warn("deliver: breaker store failed; sending anyway", "light", light, "err", err)
			adm = Admission{Allow: true}
		}
		if !adm.Allow {
			derr := &DeliveryError{Kind: KindHeld, Inbox: j.Inbox, Until: adm.Until}
			d.failed(work, j, host, number, derr, Attempt{Outcome: AttemptHeld}, false)
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
		kind := KindRetryable
		if permanentSendError(sendErr) {
			kind = KindPermanent
		} else {
			reachable = false
		}
		derr = &DeliveryError{Kind: kind, Inbox: j.Inbox, StatusCode: status, Err: sendErr}
	case d.permanent(work, e.KeyID, status):
		derr = &DeliveryError{Kind: KindPermanent, Inbox: j.Inbox, StatusCode: status, RetryAfter: retryAfter}
	default:
		reachable = false
		derr = &DeliveryError{Kind: KindRetryable, Inbox: j.Inbox, StatusCode: status, RetryAfter: retryAfter}
	}
	// Only the host's answer, or its silence, moves its breaker: not our own
	// signing failure, nor the guard refusing to send.
	if b := d.cfg.Breaker; b != nil && record {
		if err := b.Store.Record(work, light, adm.Probe, reachable, d.cfg.Now(), d.rule()); err != nil {
			d.log.Warn("deliver: breaker store failed", "light", light, "err", err)
		}
	}
	if record {
		d.observeAvailability(work, host, derr == nil, reachable)
	}
	if derr == nil {
		att.Outcome = AttemptDelivered
		d.attempt(work, j, host, number, att)
		d.settle(work, j, host, ResultDelivered, number, nil)
		return
	}
	att.Outcome = AttemptFailed
	d.failed(work, j, host, number, derr, att, derr.Kind == KindPermanent)
}

// cutOff returns j, interrupted by the end of work, to the queue due at
// once with its attempts unchanged. The remote may have received it; a
// delivery is at least once.
func (d *Deliverer) cutOff(work context.Context, j *Job) {
	d.log.Info("deliver: delivery cut off by shutdown; returned to the queue", "inbox", j.Inbox)
	d.finish(work, j, Outcome{RetryAt: d.cfg.Now(), Attempts: j.Attempts})
}

func (d *Deliverer) rule() BreakerRule {
	return BreakerRule{Threshold: d.cfg.Breaker.Threshold, CoolOff: d.cfg.Breaker.CoolOff}
}

func (d *Deliverer) permanent(ctx context.Context, keyID string, status int) bool {
	if d.cfg.Permanent(status) {
		return true
	}
	if !slices.Contains(d.cfg.PermanentIfSenderGone, status) {
		return false
	}
	gone, err := d.keys.Gone(ctx, keyID)
	if err != nil {
		d.log.Warn("deliver: SenderKeys.Gone failed", "key_id", keyID, "err", err)
	}
	return gone
}

// unsent reports errors of the guard refusing a request before it was
// sent: nothing about the host's health.
func unsent(err error) bool {
	return errors.Is(err, client.ErrBlocked) || errors.Is(err, client.ErrInvalidURL) || errors.Is(err, client.ErrHiddenService)
}

// permanentSendError reports errors that no retry can mend: the guard
// refusing the address or URL, or a redirect, which a POST never follows.
func permanentSendError(err error) bool {
	return unsent(err) || errors.Is(err, client.ErrRedirectNotFollowed)
}

// failed reports an attempt that did not deliver and either settles the job
// or schedules its retry.
func (d *Deliverer) failed(ctx context.Context, j *Job, host string, number int, derr *DeliveryError, att Attempt, permanent bool) {
	e := j.Envelope
	if att.Outcome == 0 {
		att.Outcome = AttemptFailed
	}
	att.Err = derr
	d.attempt(ctx, j, host, number, att)
	if permanent {
		if derr.Err != nil {
			d.log.Info("deliver: refused for good", "inbox", j.Inbox, "status", derr.StatusCode, "err", derr.Err)
		} else {
			d.log.Info("deliver: refused for good", "inbox", j.Inbox, "status", derr.StatusCode)
		}
		if d.cfg.OnFailure != nil {
			d.cfg.OnFailure(ctx, Failure{Inbox: j.Inbox, Host: host, ActivityID: e.ActivityID, ActorID: e.ActorID,
				Tag: e.Tag, StatusCode: derr.StatusCode, Err: derr})
		}
		d.settle(ctx, j, host, ResultFailed, number, derr)
		return
	}
	now := d.cfg.Now()
	delay, ok := d.cfg.Retry.Next(number)
	if !ok || (e.MaxAttempts > 0 && number >= e.MaxAttempts) {
		d.settle(ctx, j, host, ResultGaveUp, number, &DeliveryError{Kind: KindExhausted, Inbox: j.Inbox,
			StatusCode: derr.StatusCode, Err: derr})
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
		d.settle(ctx, j, host, ResultGaveUp, number, &DeliveryError{Kind: KindDeadline, Inbox: j.Inbox,
			StatusCode: derr.StatusCode, Err: derr})
		return
	}
	d.finish(ctx, j, Outcome{RetryAt: at, Attempts: number})
}

func (d *Deliverer) attempt(ctx context.Context, j *Job, host string, number int, a Attempt) {
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

func (d *Deliverer) settle(ctx context.Context, j *Job, host string, r Result, attempts int, err error) {
	if d.cfg.OnSettled != nil {
		s := Settlement{Inbox: j.Inbox, Host: host, ActivityID: j.Envelope.ActivityID, Tag: j.Envelope.Tag,
			Result: r, Attempts: attempts}
		if err != nil {
			s.Err = err
		}
		d.cfg.OnSettled(ctx, s)
	}
	d.finish(ctx, j, Outcome{Result: r, Attempts: attempts})
}

func (d *Deliverer) finish(ctx context.Context, j *Job, o Outcome) {
	// Record the outcome even when the work context was cancelled at the
	// end of the grace period.
	if err := d.queue.Finish(context.WithoutCancel(ctx), j.Ref(), o); err != nil {
		d.log.Warn("deliver: could not record outcome", "inbox", j.Inbox, "result", o.Result.String(), "err", err)
	}
}

var errSign = errors.New("deliver: signing failed")

// send posts j's activity, signed afresh, and returns the answer that
// stands: its status, its Retry-After, and the scheme it was signed with.
//
// A host with a scheme remembered as accepted gets that scheme, and a
// second knock only when its refusal carries an Accept-Signature, or it is
// remembered as RFC 9421 and answers 401 or 403 (negotiate.go); a
// draft-cavage host remembered for ReprobeAfter is probed with RFC 9421 as
// if none were remembered (reprobe.go). Otherwise a refusal is about the
// activity, not the signature (GoToSocial answers 400 to a correctly
// signed Like of a status it does not have). A host with none remembered
// gets the first scheme (the
// configured one, or the key's: see firstScheme), and on a refusal (400,
// 401 or 403) one knock with the other; PeerTube answers 403 to any RFC
// 9421 signature. When the second knock is refused too (400, 401 or 403,
// or no answer), the first answer stands, since it is what the server said
// to the scheme it reads, with one exception: a 401 or 403 to the first
// followed by a 400 to the second means the server read the second and
// refused the content. Any other answer to the second knock (a 2xx, a 5xx,
// a 410) is the server's word on the delivery and stands.
func (d *Deliverer) send(ctx context.Context, j *Job, host string, key crypto.Signer, rs *runSlot) (int, time.Duration, sig.Scheme, error) {
	e := j.Envelope
	first := d.firstScheme(key)
	remembered, known, probe := d.recall(ctx, host)
	if known {
		first = remembered
	}
	if probe {
		// Knock as for a host with none remembered: a refusal gets the
		// draft-cavage knock, and whichever is accepted is remembered.
		first, known = sig.SchemeRFC9421, false
	}
	var syncHeader string
	if e.SynchronizeCollection && d.cfg.Followers != nil {
		syncHeader = d.syncHeader(ctx, e, j.Inbox)
	}
	signer, err := d.signerFor(e.KeyID, key)
	if err != nil {
		return 0, 0, 0, errors.Join(errSign, err)
	}
	k1 := d.firstKnock(host, signer, first, known)
	status, retryAfter, accept, err := d.post(ctx, j, host, k1, syncHeader, rs)
	if err != nil {
		return status, retryAfter, first, err
	}
	if ok2xx(status) {
		if !known || first != remembered {
			d.rememberScheme(ctx, host, first)
		}
		return status, retryAfter, first, nil
	}
	if !signatureRefusal(status) {
		return status, retryAfter, first, nil
	}
	k2, ok := d.secondKnock(ctx, j, host, signer, first, known, status, accept)
	if !ok {
		return status, retryAfter, first, nil
	}
	second := k2.scheme
	status2, retryAfter2, _, err := d.post(ctx, j, host, k2, syncHeader, rs)
	switch {
	case err != nil && ctx.Err() != nil:
		// Cut off: the caller returns the delivery to the queue.
		return status2, retryAfter2, second, err
	case err == nil && !signatureRefusal(status2):
		// Delivered, or an answer about the delivery itself (a 503, a
		// 410) from a server that read the second scheme.
		if ok2xx(status2) {
			d.rememberScheme(ctx, host, second)
			d.negotiated.remember(host, k2.asked)
		}
		return status2, retryAfter2, second, nil
	case err == nil && status2 == http.StatusBadRequest && status != http.StatusBadRequest:
		return status2, retryAfter2, second, nil
	}
	return status, retryAfter, first, nil
}

func ok2xx(status int) bool { return status >= 200 && status < 300 }

// signatureRefusal reports the statuses servers answer a signature they do
// not read: 401 (Mastodon), 400 (some), 403 (PeerTube, to RFC 9421).
func signatureRefusal(status int) bool {
	return status == http.StatusBadRequest || status == http.StatusUnauthorized || status == http.StatusForbidden
}

// firstScheme is the scheme for a host with none remembered: FirstScheme
// when set, else RFC 9421 for an Ed25519 key, whose draft-cavage
// signature Fedify's RSA-only verifier answers with 500, and draft-cavage
// for the rest, which every server reads.
func (d *Deliverer) firstScheme(key crypto.Signer) sig.Scheme {
	if d.cfg.FirstScheme != 0 {
		return d.cfg.FirstScheme
	}
	if _, ok := key.Public().(ed25519.PublicKey); ok {
		return sig.SchemeRFC9421
	}
	return sig.SchemeCavage
}

func (d *Deliverer) rememberScheme(ctx context.Context, host string, s sig.Scheme) {
	if err := d.learn(ctx, host, s); err != nil {
		d.log.Warn("deliver: scheme store failed", "host", host, "err", err)
	}
}

// post sends one knock and returns its status, its Retry-After and, on a
// signature refusal, its Accept-Signature; once signed, rs's delivery waits
// on the network and leaves the signers' line.
func (d *Deliverer) post(ctx context.Context, j *Job, host string, k knock, syncHeader string, rs *runSlot) (int, time.Duration, string, error) {
	body := j.Envelope.Body
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.Inbox, bytes.NewReader(body))
	if err != nil {
		return 0, 0, "", err
	}
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	req.Header.Set("Content-Type", d.cfg.ContentType)
	if syncHeader != "" {
		req.Header.Set(colsync.HeaderName, syncHeader)
	}
	var signErr error
	resp, err := d.client.DoWith(req, &client.DoOpts{Sign: func(r *http.Request) error {
		d.signTurns.acquire(d.limiter.backlog(host))
		err := k.sign(r)
		d.signTurns.release()
		rs.waiting()
		if err != nil {
			signErr = errors.Join(errSign, err)
			return signErr
		}
		return nil
	}})
	if signErr != nil {
		return 0, 0, "", signErr
	}
	if err != nil {
		return 0, 0, "", err
	}
	// Drain a little so the connection can be reused; the body is never
	// echoed, since a remote server controls it.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	var retryAfter time.Duration
	if v := resp.Header.Get("Retry-After"); v != "" {
		if ra, ok := ParseRetryAfter(v, d.cfg.Now()); ok {
			retryAfter = ra
		}
	}
	var accept string
	if signatureRefusal(resp.StatusCode) {
		accept = resp.Header.Get(sig.AcceptSignatureHeader)
	}
	return resp.StatusCode, retryAfter, accept, nil
}

func (d *Deliverer) syncHeader(ctx context.Context, e *Envelope, inbox string) string {
	origin, err := colsync.Origin(inbox)
	if err != nil {
		return ""
	}
	f, err := d.cfg.Followers.FollowersOn(ctx, e.ActorID, origin)
	if err != nil {
		d.log.Warn("deliver: followers for synchronization not loaded", "actor", e.ActorID, "err", err)
		return ""
	}
	if f.CollectionID == "" {
		return ""
	}
	return f.HeaderFor(origin).String()
}
