package directory

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Lease and retention defaults shared by every StateStore user.
const (
	// LeaseTTLDefault is how long one lease grant lasts without renewal.
	LeaseTTLDefault = time.Minute
	// LeaseRenewDefault is how often a holder renews its lease.
	LeaseRenewDefault = 20 * time.Second
	// StateRetentionDefault is how long a state record survives its last write.
	StateRetentionDefault = 90 * 24 * time.Hour
	// MaxAttempts bounds StateRecord.Attempts; the backoff is capped long
	// before this, so the counter only has to stay small.
	MaxAttempts = 64
)

var (
	// ErrLeaseHeld is returned by StateStore.Acquire when another owner holds
	// a live lease for the Directory.
	ErrLeaseHeld = errors.New("directory: lease held by another owner")
	// ErrLeaseLost is returned by Renew, Release and Save when the caller's
	// token is no longer the current lease: it expired or a newer owner took
	// it. A former owner must stop and never write.
	ErrLeaseLost = errors.New("directory: lease lost")
	// ErrInvalidRecord is returned when a persisted state record holds a
	// value outside its closed vocabulary or bounds.
	ErrInvalidRecord = errors.New("directory: invalid state record")
)

// StateStore persists one bounded StateRecord and one renewable lease per
// canonical Directory origin. It is shared by every process that may talk to
// a Directory (API replicas, one-off commands), so implementations must make
// Save atomic with the token check: a former owner can never overwrite a
// newer owner's state. redisstate implements it on Redis; MemoryStateStore
// serves a single process.
type StateStore interface {
	// Load returns the record for origin, or the zero record when none is
	// stored. It needs no lease: status reports read it freely.
	Load(ctx context.Context, origin string) (StateRecord, error)
	// Acquire takes the lease for ttl and returns a fresh unguessable token,
	// or ErrLeaseHeld.
	Acquire(ctx context.Context, origin string, ttl time.Duration) (token string, err error)
	// Renew extends a held lease to ttl from now, or returns ErrLeaseLost.
	Renew(ctx context.Context, origin, token string, ttl time.Duration) error
	// Release drops a held lease; ErrLeaseLost when it was no longer held.
	Release(ctx context.Context, origin, token string) error
	// Save replaces the record when token is the current lease, refreshing
	// its retention; otherwise ErrLeaseLost and nothing is written.
	Save(ctx context.Context, origin, token string, rec StateRecord) error
}

// Diagnostic is the closed local classification of the last failed attempt.
type Diagnostic string

// The diagnostics. A Directory error is DiagDirectory with StateRecord.Code set.
const (
	DiagNone            Diagnostic = ""
	DiagTransport       Diagnostic = "transport"        // no validated response
	DiagInvalidResponse Diagnostic = "invalid_response" // malformed or off-protocol response
	DiagStatus          Diagnostic = "status_failed"    // status read or negotiation failed
	DiagDirectory       Diagnostic = "directory_error"  // a validated error code
	DiagTimeout         Diagnostic = "timeout"          // the reconciliation deadline passed
	DiagLeaseLost       Diagnostic = "lease_lost"       // ownership lost mid-flight
	DiagLocal           Diagnostic = "local"            // configuration, key or profile problem
)

func (d Diagnostic) valid() bool {
	switch d {
	case DiagNone, DiagTransport, DiagInvalidResponse, DiagStatus, DiagDirectory, DiagTimeout, DiagLeaseLost, DiagLocal:
		return true
	}
	return false
}

// StateRecord is the bounded persisted scheduler state of one Directory. It
// holds only closed values, whole-second times, a bounded counter and a
// digest: never request bodies, signatures, keys, nonces or remote text.
type StateRecord struct {
	// State is the persisted local state: StateConfigured (never succeeded),
	// StateRegistered, StateRetrying, StateDisabled (unregistered) or
	// StateUnregisterPending. StateHeartbeatCurrent is derived, not stored.
	State State
	// Registered reports that the Directory acknowledged a registration
	// under ProfileDigest and Protocol, so a heartbeat is enough.
	Registered bool
	// Protocol is the lifecycle version of the last successful register.
	Protocol Version
	// ProfileDigest is the hex SHA-256 of the normalised profile last
	// registered; it is never sent.
	ProfileDigest string
	// LastAttempt is when the last attempt completed, whole seconds.
	LastAttempt time.Time
	// LastSuccess is when the last successful one completed.
	LastSuccess time.Time
	// NextHeartbeat is the next normal heartbeat deadline.
	NextHeartbeat time.Time
	// RetryAt is the persisted lower bound after a failure (backoff,
	// Retry-After, or the daily deferral of a non-retryable failure). No
	// attempt, the startup pulse included, happens before it.
	RetryAt time.Time
	// Attempts counts consecutive failures, at most MaxAttempts.
	Attempts int
	// Operation is the last attempt's operation.
	Operation Operation
	// Outcome is its outcome on success, else "".
	Outcome Outcome
	// Code is the Directory's error code on a rejected attempt, else "".
	Code ErrorCode
	// Diagnostic classifies a failed attempt; DiagNone after a success.
	Diagnostic Diagnostic
}

// IsZero reports whether r is the record of a never-seen Directory.
func (r StateRecord) IsZero() bool { return r == StateRecord{} }

// Normalize truncates times to whole seconds (UTC) and clamps Attempts, the
// form every store persists.
func (r StateRecord) Normalize() StateRecord {
	sec := func(t time.Time) time.Time {
		if t.IsZero() {
			return time.Time{}
		}
		return time.Unix(t.Unix(), 0).UTC()
	}
	r.LastAttempt, r.LastSuccess = sec(r.LastAttempt), sec(r.LastSuccess)
	r.NextHeartbeat, r.RetryAt = sec(r.NextHeartbeat), sec(r.RetryAt)
	r.Attempts = min(max(r.Attempts, 0), MaxAttempts)
	return r
}

// Validate reports ErrInvalidRecord when a field is outside its closed
// vocabulary or bounds. Stores call it on Save and Load.
func (r StateRecord) Validate() error {
	bad := func(what string) error { return fmt.Errorf("%w: %s", ErrInvalidRecord, what) }
	switch r.State {
	case "", StateConfigured, StateRegistered, StateRetrying, StateDisabled, StateUnregisterPending:
	default:
		return bad("state")
	}
	if r.Protocol != 0 && !r.Protocol.Valid() {
		return bad("protocol")
	}
	if r.ProfileDigest != "" && !isHexDigest(r.ProfileDigest) {
		return bad("profile digest")
	}
	if r.Attempts < 0 || r.Attempts > MaxAttempts {
		return bad("attempts")
	}
	if r.Operation != "" && !r.Operation.valid() {
		return bad("operation")
	}
	if r.Outcome != "" && (r.Operation == "" || !r.Outcome.fits(r.Operation)) {
		return bad("outcome")
	}
	if r.Code != "" && !r.Code.statusFits(statusOf(r.Code)) {
		return bad("code")
	}
	if !r.Diagnostic.valid() {
		return bad("diagnostic")
	}
	for _, t := range []time.Time{r.LastAttempt, r.LastSuccess, r.NextHeartbeat, r.RetryAt} {
		if !t.IsZero() && (t.Unix() < 0 || t.Nanosecond() != 0) {
			return bad("time")
		}
	}
	return nil
}

// statusOf gives one HTTP status each code may carry, to reuse the closed
// code check.
func statusOf(c ErrorCode) int {
	for _, sc := range []int{400, 401, 403, 409, 429, 500, 503} {
		if c.statusFits(sc) {
			return sc
		}
	}
	return 0
}

func isHexDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
