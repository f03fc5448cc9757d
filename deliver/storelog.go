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
	now   func() time.Time
	mu    sync.Mutex
	since time.Time // the first failure
	// fails counts the calls failed since the store last answered; written
	// under mu, read without it on every answered call.
	fails atomic.Int64
}

// note records one call's result and reports whether it failed. A failure
// is logged as msg, with key=value and the error, when it is the first
// since the store last answered; an answer after failures logs the end of
// the outage. An answer while the store is well costs an atomic load.
func (s *storeLog) note(err error, msg, key, value string) bool {
	if err == nil {
		if s.fails.Load() == 0 {
			return false
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if n := s.fails.Load(); n > 0 {
			s.log.Info("deliver: "+s.store+" store answers again", "outage", s.now().Sub(s.since), "failed_calls", n)
			s.fails.Store(0)
		}
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fails.Add(1) == 1 {
		s.since = s.now()
		s.log.Warn(msg, key, value, "err", err, "note", "logged once until the store answers again")
	}
	return true
}
