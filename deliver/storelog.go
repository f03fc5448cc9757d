package deliver

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// storeLog keeps one store's failures to two log lines per outage: a
// warning at the first failure, with its error, and one line when the
// store answers again, saying for how long and how many calls failed. A
// Redis or PostgreSQL store that goes away fails every delivery's call to
// it, and a delivery makes up to four: a line each would be thousands a
// second in a fan-out. Delivery goes on without the store meanwhile, as
// each caller says.
type storeLog struct {
	log   *slog.Logger
	store string // "breaker", "availability", "scheme"
	// failing is fails > 0, read without the lock on every answered call.
	failing atomic.Bool
	mu      sync.Mutex
	since   time.Time // the first failure, on Config.Now
	fails   int
}

// failed notes a failed call at now, logging msg with err and attrs if it
// is the first since the store last answered.
func (s *storeLog) failed(now time.Time, msg string, err error, attrs ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fails++
	if s.fails > 1 {
		return
	}
	s.since = now
	s.failing.Store(true)
	s.log.Warn(msg, append(attrs, "err", err, "note", "logged once until the store answers again")...)
}

// answered notes a call that succeeded at now; it costs an atomic load
// unless the store was failing.
func (s *storeLog) answered(now time.Time) {
	if !s.failing.Load() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fails == 0 {
		return
	}
	s.log.Info("deliver: "+s.store+" store answers again", "outage", now.Sub(s.since), "failed_calls", s.fails)
	s.fails = 0
	s.failing.Store(false)
}
