package deliver

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/fedkit/fedkit/deliver/colsync"
	"github.com/fedkit/fedkit/deliver/driver"
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
	// Schemes remembers per host which scheme worked; one store may be
	// shared by several Deliverers and a fetch.Fetcher. Defaults to a
	// sig.NewHostSchemes(sig.HostSchemesMaxDefault) of this Deliverer's
	// own.
	Schemes sig.SchemeStore
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
	// inboxes in the priority lane unless its Batch.Lane says otherwise.
	// Defaults to 0 (only Batch.Lane does).
	PriorityMaxInboxes int
	// Followers provides FEP-8fcf data for batches sent with
	// SynchronizeCollection. Defaults to nil: no header is sent.
	Followers FollowersSource
	// ContentType is the Content-Type of a delivery. Defaults to
	// ContentTypeDefault.
	ContentType string

	// OnAttempt sees every attempt: delivered, failed, refused or held.
	// Defaults to nil.
	OnAttempt func(ctx context.Context, a Attempt)
	// OnFailure sees every permanent refusal, with its status. Defaults to
	// nil.
	OnFailure func(ctx context.Context, f Failure)
	// OnSettled is awaited for each delivery that is done with, before it
	// leaves the queue. Defaults to nil.
	OnSettled func(ctx context.Context, s Settlement)
	// SkipIf, when it returns true for a delivery coming due, drops it
	// unsent (settled as skipped). Defaults to nil: nothing is skipped.
	SkipIf func(ctx context.Context, inbox string, e *driver.Envelope) bool
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
	// Now returns the current time: every time the Deliverer stores or
	// compares, and what it hands the components it is given (a
	// CachingSenderKeys with no Now of its own, the Queue's Notify, the
	// breaker and availability stores on each call, the signer), so a test
	// sets time here once. Defaults to time.Now.
	Now func() time.Time
}

// DefaultConfig returns the defaults, as a nil or zero Config means them,
// with Breaker set so that its fields can be edited in place
// (cfg.Breaker.Store = ...).
func DefaultConfig() *Config { return &Config{Breaker: &BreakerConfig{}} }
