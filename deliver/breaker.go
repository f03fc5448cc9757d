package deliver

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"
)

// Breaker defaults, as Mastodon's Stoplights are set.
const (
	BreakerThresholdDefault = 10
	BreakerCoolOffDefault   = time.Minute
)

// BreakerConfig configures the circuit breaker. Config.Breaker being nil
// means the zero BreakerConfig, the defaults; Config.DisableBreaker turns
// the breaker off.
type BreakerConfig struct {
	// Threshold is how many failures in a row open the breaker. Defaults to
	// BreakerThresholdDefault.
	Threshold int
	// CoolOff is how long an open breaker holds deliveries before letting a
	// probe through. Defaults to BreakerCoolOffDefault.
	CoolOff time.Duration
	// PerInbox keys a breaker by inbox URL, as Mastodon does, instead of by
	// host. Defaults to false (per host).
	PerInbox bool
	// Store keeps breaker state. Defaults to a MemoryBreakerStore of this
	// Deliverer's own.
	Store BreakerStore
}

// BreakerRule is what a BreakerStore needs of the configuration; the
// deliverer passes it on every call so one store can serve several
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
// for a shared store) and must pass delivertest.TestBreakerStore.
type BreakerStore interface {
	// Admit decides whether a delivery to light may be sent at now.
	Admit(ctx context.Context, light string, now time.Time, rule BreakerRule) (Admission, error)
	// Record reports the outcome of a delivery Admit allowed; probe is the
	// Admission's Probe.
	Record(ctx context.Context, light string, probe, ok bool, now time.Time, rule BreakerRule) error
}

var _ BreakerStore = (*MemoryBreakerStore)(nil)

// MemoryBreakerStore is a BreakerStore in process memory. It keeps state
// only for lights that have failed since their last success. The zero value
// is ready to use.
type MemoryBreakerStore struct {
	mu     sync.Mutex
	lights map[string]*lightState
}

type lightState struct {
	failures     int       // in a row while closed; zero once open
	lastFailure  time.Time // zero if never
	openUntil    time.Time // zero while closed
	probeStarted time.Time // zero when no probe admitted since it opened
}

// Admit implements BreakerStore.
func (s *MemoryBreakerStore) Admit(ctx context.Context, light string, now time.Time, rule BreakerRule) (Admission, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lights[light]
	if l == nil || l.openUntil.IsZero() {
		return Admission{Allow: true}, nil
	}
	if now.Before(l.openUntil) {
		return Admission{Until: l.openUntil}, nil
	}
	if until := l.probeStarted.Add(rule.CoolOff); !l.probeStarted.IsZero() && now.Before(until) {
		return Admission{Until: until}, nil
	}
	l.probeStarted = now
	return Admission{Allow: true, Probe: true}, nil
}

// Record implements BreakerStore.
func (s *MemoryBreakerStore) Record(ctx context.Context, light string, probe, ok bool, now time.Time, rule BreakerRule) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lights[light]
	open := l != nil && !l.openUntil.IsZero()
	if open != probe {
		// A non-probe outcome while open, or a lost probe's after its
		// replacement closed the light.
		return nil
	}
	if ok {
		delete(s.lights, light)
		return nil
	}
	if l == nil {
		if s.lights == nil {
			s.lights = make(map[string]*lightState)
		}
		l = &lightState{}
		s.lights[light] = l
	}
	l.lastFailure = now
	if probe {
		l.probeStarted = time.Time{}
		l.openUntil = now.Add(rule.CoolOff)
		return nil
	}
	l.failures++
	if l.failures >= rule.Threshold {
		l.openUntil = now.Add(rule.CoolOff)
		l.failures = 0
	}
	return nil
}

// BreakerLight is one light's state as a MemoryBreakerStore holds it, read
// for display (a status page, an admin command); deliveries never read it.
// Its fields are those of redisbreaker's Light, in the same order, so one
// converts to the other (redisbreaker.Light(l).Color(now) names its state).
// While OpenUntil is zero the light is closed; before OpenUntil it holds
// every delivery; after, it lets one probe through at a time.
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

// Light returns one light's state; a light with nothing stored is closed
// with no failures.
func (s *MemoryBreakerStore) Light(name string) BreakerLight {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lights[name].read(name)
}

// Lights returns every light with something stored (a failure counted, or
// open), sorted by name: a light is forgotten when it closes, so these are
// the troubled destinations.
func (s *MemoryBreakerStore) Lights() []BreakerLight {
	s.mu.Lock()
	out := make([]BreakerLight, 0, len(s.lights))
	for name, l := range s.lights {
		out = append(out, l.read(name))
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b BreakerLight) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

func (l *lightState) read(name string) BreakerLight {
	if l == nil {
		return BreakerLight{Name: name}
	}
	return BreakerLight{Name: name, Failures: l.failures, LastFailure: l.lastFailure,
		OpenUntil: l.openUntil, ProbeStarted: l.probeStarted}
}
