package identity

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Lock serialises handle refreshes per DID across every consumer, the
// redriver and the sweep. pgstore.Lock is the multi-process implementation;
// MemoryLock serves a single process. Both pass identitytest.TestLock.
type Lock interface {
	// WithLock runs fn while holding did's lock. It waits at most Wait() for
	// the lock and then fails with an error matching ErrLockBusy. fn runs
	// synchronously; the lock is not re-entrant.
	WithLock(ctx context.Context, did DID, fn func(ctx context.Context) error) error
	// Wait is how long WithLock waits. A non-positive wait makes the lock
	// unusable and the Refresher fail closed. A nil receiver must return 0.
	Wait() time.Duration
}

// LockWaitDefault is how long a refresh waits for a DID's lock: the 5 s
// resolve, the 15 s well-known verification and 5 s to spare.
const LockWaitDefault = 25 * time.Second

// MemoryLock is a per-DID lock inside one process.
type MemoryLock struct {
	wait time.Duration
	mu   sync.Mutex
	held map[DID]*memLockEntry
}

type memLockEntry struct {
	ch   chan struct{} // capacity 1: a token means held
	refs int
}

var _ Lock = (*MemoryLock)(nil)

// NewMemoryLock returns a lock that waits up to wait (zero means
// LockWaitDefault; negative makes it unusable, for tests of fail-closed).
func NewMemoryLock(wait time.Duration) *MemoryLock {
	if wait == 0 {
		wait = LockWaitDefault
	}
	return &MemoryLock{wait: wait, held: make(map[DID]*memLockEntry)}
}

// Wait implements Lock.
func (l *MemoryLock) Wait() time.Duration {
	if l == nil {
		return 0
	}
	return l.wait
}

// WithLock implements Lock.
func (l *MemoryLock) WithLock(ctx context.Context, did DID, fn func(context.Context) error) error {
	if l.Wait() <= 0 {
		return ErrLockUnavailable
	}
	l.mu.Lock()
	e := l.held[did]
	if e == nil {
		e = &memLockEntry{ch: make(chan struct{}, 1)}
		l.held[did] = e
	}
	e.refs++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(l.held, did)
		}
		l.mu.Unlock()
	}()

	t := time.NewTimer(l.wait)
	defer t.Stop()
	select {
	case e.ch <- struct{}{}:
	case <-t.C:
		return fmt.Errorf("%w: waited %s for %s", ErrLockBusy, l.wait, did)
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-e.ch }()
	return fn(ctx)
}
