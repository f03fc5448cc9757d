package sig

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/fedkit/fedkit/internal/clock"
)

// MemoryNonceMaxDefault bounds a MemoryNonceStore.
const MemoryNonceMaxDefault = 100_000

// ErrNonceStoreFull is returned by MemoryNonceStore.Reserve when it holds
// MaxEntries unexpired reservations; verification then fails closed.
var ErrNonceStoreFull = errors.New("sig: nonce store full")

// MemoryNonceStoreConfig configures a MemoryNonceStore. The zero value is
// usable.
type MemoryNonceStoreConfig struct {
	// Now is the clock that until times are compared with. Defaults to
	// the clock of the Verifier the store is handed to (VerifierConfig.Nonces),
	// else time.Now: the until times come from that clock.
	Now func() time.Time
	// MaxEntries bounds the reservations held. Defaults to
	// MemoryNonceMaxDefault.
	MaxEntries int
}

// MemoryNonceStore is a NonceStore for one process. Reservations are kept
// until their until time; expired ones are swept when the store fills.
type MemoryNonceStore struct {
	cfg   MemoryNonceStoreConfig
	clock *clock.Source
	mu    sync.Mutex
	seen  map[string]time.Time
}

var _ NonceStore = (*MemoryNonceStore)(nil)

// NewMemoryNonceStore returns an empty store.
func NewMemoryNonceStore(cfg *MemoryNonceStoreConfig) *MemoryNonceStore {
	s := &MemoryNonceStore{seen: map[string]time.Time{}}
	if cfg != nil {
		s.cfg = *cfg
	}
	s.clock = clock.New(s.cfg.Now)
	s.cfg.Now = s.clock.Now
	if s.cfg.MaxEntries <= 0 {
		s.cfg.MaxEntries = MemoryNonceMaxDefault
	}
	return s
}

// Reserve implements NonceStore.
func (s *MemoryNonceStore) Reserve(_ context.Context, id KeyID, nonce string, until time.Time) (bool, error) {
	// The NUL cannot occur in a key ID, so pairs cannot collide.
	k := id.String() + "\x00" + nonce
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if exp, ok := s.seen[k]; ok && now.Before(exp) {
		return false, nil
	}
	if len(s.seen) >= s.cfg.MaxEntries {
		for key, exp := range s.seen {
			if !now.Before(exp) {
				delete(s.seen, key)
			}
		}
		if len(s.seen) >= s.cfg.MaxEntries {
			return false, ErrNonceStoreFull
		}
	}
	s.seen[k] = until
	return true, nil
}
