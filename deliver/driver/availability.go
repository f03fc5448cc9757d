package driver

import (
	"context"
	"time"
)

// AvailabilityRule says when a host becomes unavailable.
type AvailabilityRule struct {
	// Days is how many distinct days (UTC, by the caller's clock) with a
	// failure, and no success since the first of them, make a host
	// unavailable.
	Days int
}

// UnavailableHost is a host deliveries are skipped for.
type UnavailableHost struct {
	// Host is the host (the limiter's and breaker's key: host[:port]).
	Host string
	// Since is when it became unavailable, by the clock of the caller that
	// recorded its last failure.
	Since time.Time
}

// AvailabilityStore remembers across days which hosts fail, as
// Mastodon's delivery failure tracker does: a host that failed on Days
// distinct days with no success in between is unavailable until it is
// seen alive (a delivery it accepts, an activity it sends, a fetch it
// answers, an operator's clear). Implementations are safe for concurrent
// use and may be shared by several processes (deliver/redisavailability,
// deliver/pgavailability); they never read a clock of their own: every
// time comes from the caller. drivertest.TestAvailabilityStore is the
// conformance suite.
type AvailabilityStore interface {
	// Failure records that host failed at now and returns when it became
	// unavailable, if it is now.
	Failure(ctx context.Context, host string, now time.Time, rule AvailabilityRule) (since time.Time, unavailable bool, err error)
	// SeenAlive forgets host's failures: it is available.
	SeenAlive(ctx context.Context, host string) error
	// Unavailable reports whether host is unavailable, and since when.
	Unavailable(ctx context.Context, host string) (since time.Time, unavailable bool, err error)
	// ListUnavailable returns the unavailable hosts, oldest first.
	ListUnavailable(ctx context.Context) ([]UnavailableHost, error)
}
