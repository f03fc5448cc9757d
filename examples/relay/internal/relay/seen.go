package relay

import (
	"context"
	"sync"
	"time"
)

// Seen-set defaults.
const (
	// SeenWindowDefault is how long the relay remembers an activity id it
	// relayed (and an object it relayed). Loops between relays come back
	// within seconds; replays within the signature window (an hour either
	// way); the window outlasts both.
	SeenWindowDefault = 6 * time.Hour
	// SeenMaxEntriesDefault bounds MemorySeen: about 200 bytes an entry.
	SeenMaxEntriesDefault = 200_000
)

// SeenSet remembers keys for a while: the relay's loop and replay guard.
// Keys are short (the relay hashes ids). Implementations are safe for
// concurrent use; *MemorySeen is one, and redisseen.Store and pgstore.Seen
// are ones every process of a deployment shares. seentest.TestSeenSet is
// the suite they pass.
type SeenSet interface {
	// Mark records key for window and reports whether it was new: not
	// marked, or marked longer than its window ago. Exactly one of several
	// concurrent Marks of a new key reports true.
	Mark(ctx context.Context, key string, window time.Duration) (bool, error)
	// Has reports whether key is marked and within its window.
	Has(ctx context.Context, key string) (bool, error)
	// Forget removes key.
	Forget(ctx context.Context, key string) error
}

// MemorySeenConfig configures a MemorySeen.
type MemorySeenConfig struct {
	// MaxEntries bounds the keys kept; beyond it the oldest are forgotten
	// before their window ends. Defaults to SeenMaxEntriesDefault.
	MaxEntries int
	// Now is the clock windows are measured by. Defaults to time.Now.
	Now func() time.Time
}

// MemorySeen is a SeenSet in this process's memory, bounded by count and
// by age. It is the default: one process, or several each with its own
// (then an id is relayed at most once per process within the window).
type MemorySeen struct {
	max int
	now func() time.Time

	mu      sync.Mutex
	expires map[string]time.Time
	order   []seenEntry // marks, oldest first; may hold keys since forgotten
}

type seenEntry struct {
	key     string
	expires time.Time
}

var _ SeenSet = (*MemorySeen)(nil)

// NewMemorySeen returns an empty MemorySeen; a nil cfg means the defaults.
func NewMemorySeen(cfg *MemorySeenConfig) *MemorySeen {
	c := MemorySeenConfig{}
	if cfg != nil {
		c = *cfg
	}
	if c.MaxEntries <= 0 {
		c.MaxEntries = SeenMaxEntriesDefault
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return &MemorySeen{max: c.MaxEntries, now: c.Now, expires: map[string]time.Time{}}
}

// Mark implements SeenSet.
func (s *MemorySeen) Mark(_ context.Context, key string, window time.Duration) (bool, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evictLocked(now)
	if exp, ok := s.expires[key]; ok && now.Before(exp) {
		return false, nil
	}
	exp := now.Add(window)
	s.expires[key] = exp
	s.order = append(s.order, seenEntry{key, exp})
	for len(s.expires) > s.max && len(s.order) > 0 {
		s.popLocked()
	}
	return true, nil
}

// Has implements SeenSet.
func (s *MemorySeen) Has(_ context.Context, key string) (bool, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.expires[key]
	return ok && now.Before(exp), nil
}

// Forget implements SeenSet.
func (s *MemorySeen) Forget(_ context.Context, key string) error {
	s.mu.Lock()
	delete(s.expires, key)
	s.mu.Unlock()
	return nil
}

// Len is how many keys are kept.
func (s *MemorySeen) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.expires)
}

// evictLocked drops the expired marks at the front. Windows are the same
// for every mark the relay makes, so marks expire about in order; one with
// a longer window behind them waits for its turn, and the count bound
// still holds.
func (s *MemorySeen) evictLocked(now time.Time) {
	for len(s.order) > 0 && !now.Before(s.order[0].expires) {
		s.popLocked()
	}
	// Forgotten keys leave entries in order; compact when they dominate.
	if len(s.order) > 2*len(s.expires)+64 {
		kept := s.order[:0]
		for _, e := range s.order {
			if exp, ok := s.expires[e.key]; ok && exp.Equal(e.expires) {
				kept = append(kept, e)
			}
		}
		clear(s.order[len(kept):])
		s.order = kept
	}
}

// popLocked forgets the oldest mark, unless its key was marked again since.
func (s *MemorySeen) popLocked() {
	e := s.order[0]
	s.order[0] = seenEntry{}
	s.order = s.order[1:]
	if exp, ok := s.expires[e.key]; ok && exp.Equal(e.expires) {
		delete(s.expires, e.key)
	}
}
