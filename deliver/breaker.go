package deliver

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
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
	Store driver.BreakerStore
}

var _ driver.BreakerStore = (*MemoryBreakerStore)(nil)

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
func (s *MemoryBreakerStore) Admit(ctx context.Context, light string, now time.Time, rule driver.BreakerRule) (driver.Admission, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lights[light]
	if l == nil || l.openUntil.IsZero() {
		return driver.Admission{Allow: true}, nil
	}
	if now.Before(l.openUntil) {
		return driver.Admission{Until: l.openUntil}, nil
	}
	if until := l.probeStarted.Add(rule.CoolOff); !l.probeStarted.IsZero() && now.Before(until) {
		return driver.Admission{Until: until}, nil
	}
	l.probeStarted = now
	return driver.Admission{Allow: true, Probe: true}, nil
}

// Record implements BreakerStore.
func (s *MemoryBreakerStore) Record(ctx context.Context, light string, probe, ok bool, now time.Time, rule driver.BreakerRule) error {
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

// Light returns one light's state; a light with nothing stored is closed
// with no failures.
func (s *MemoryBreakerStore) Light(name string) driver.BreakerLight {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lights[name].read(name)
}

// Lights returns every light with something stored (a failure counted, or
// open), sorted by name: a light is forgotten when it closes, so these are
// the troubled destinations.
func (s *MemoryBreakerStore) Lights() []driver.BreakerLight {
	s.mu.Lock()
	out := make([]driver.BreakerLight, 0, len(s.lights))
	for name, l := range s.lights {
		out = append(out, l.read(name))
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b driver.BreakerLight) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

func (l *lightState) read(name string) driver.BreakerLight {
	if l == nil {
		return driver.BreakerLight{Name: name}
	}
	return driver.BreakerLight{Name: name, Failures: l.failures, LastFailure: l.lastFailure,
		OpenUntil: l.openUntil, ProbeStarted: l.probeStarted}
}
