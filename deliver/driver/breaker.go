package driver

import (
	"context"
	"time"
)

// BreakerRule is what a BreakerStore needs of the configuration; the
// Deliverer passes it on every call so one store can serve several
// configurations.
type BreakerRule struct {
	// Threshold is how many failures in a row open a closed breaker.
	Threshold int
	// CoolOff is how long an open breaker holds deliveries, and how long a
	// probe may stay out before another replaces it.
	CoolOff time.Duration
}

// Admission is a BreakerStore's answer for one delivery.
type Admission struct {
	// Allow says to send the delivery now.
	Allow bool
	// Probe says this delivery is the one trial of an open breaker; its
	// outcome must be recorded with probe true.
	Probe bool
	// Until, for a held delivery, is when the breaker may next let one
	// through: the end of its cool-off, or of a probe in flight.
	Until time.Time
}

// BreakerStore keeps circuit breaker state, keyed by light name (a host, or
// an inbox URL). Rules, for a light:
//
//   - closed, it admits everything; Threshold failures in a row open it
//     until now+CoolOff; a success resets the count;
//   - open, it holds everything (Allow false, Until the cool-off's end) until
//     the cool-off ends, then admits one delivery as the probe; while the
//     probe is out (at most CoolOff), every other delivery is held;
//   - a probe that succeeds closes it; one that fails opens it until
//     now+CoolOff; outcomes of non-probe deliveries while it is not closed
//     are ignored;
//   - a probe's outcome that arrives while it is closed (a lost probe
//     reporting after its replacement closed it) is ignored: the
//     destination was just proven healthy.
//
// Implementations must be safe for concurrent use (also across processes,
// for a shared store) and must pass drivertest.TestBreakerStore.
type BreakerStore interface {
	// Admit decides whether a delivery to light may be sent at now.
	Admit(ctx context.Context, light string, now time.Time, rule BreakerRule) (Admission, error)
	// Record reports the outcome of a delivery Admit allowed; probe is the
	// Admission's Probe.
	Record(ctx context.Context, light string, probe, ok bool, now time.Time, rule BreakerRule) error
}

// BreakerLight is one light's state as a store holds it, read for display
// (a status page, an admin command); deliveries never read it. While
// OpenUntil is zero the light is closed; before OpenUntil it holds every
// delivery; after, it lets one probe through at a time. The memory store
// and redisbreaker both read their lights back as BreakerLight.
type BreakerLight struct {
	// Name is the light: a host or an inbox URL.
	Name string
	// Failures counts failures in a row while closed; it restarts at zero
	// when the light opens.
	Failures int
	// LastFailure is when the last failure was recorded; zero if never.
	LastFailure time.Time
	// OpenUntil is when the cool-off ends; zero while the light is closed.
	OpenUntil time.Time
	// ProbeStarted is when the probe now out, or the last one lost, was
	// admitted; zero if none since the light last opened.
	ProbeStarted time.Time
}

// LightColor is a light's state at a given time, named as the stoplight
// gem (Mastodon's breaker) names it.
type LightColor string

// The colours of a light.
const (
	// LightGreen is closed: deliveries go.
	LightGreen LightColor = "green"
	// LightRed is open: deliveries are held until BreakerLight.OpenUntil.
	LightRed LightColor = "red"
	// LightYellow is open past its cool-off: one delivery at a time goes
	// as a probe, the rest are held.
	LightYellow LightColor = "yellow"
)

// Color returns the light's colour at now. Stores keep no clock of their
// own, so the caller says when.
func (l BreakerLight) Color(now time.Time) LightColor {
	switch {
	case l.OpenUntil.IsZero():
		return LightGreen
	case now.Before(l.OpenUntil):
		return LightRed
	default:
		return LightYellow
	}
}

// BreakerCounter is implemented by a BreakerStore that can count its open
// lights (open or probing), for the fedkit.deliver.breakers.open gauge the
// Deliverer reports while Run runs.
type BreakerCounter interface {
	OpenBreakers(ctx context.Context, now time.Time) (int, error)
}
