package directory

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"time"
)

var _ StateStore = (*MemoryStateStore)(nil)

// MemoryStateStore is a StateStore for one process without Redis. Its leases
// fence goroutines of that process only. The zero value is ready to use.
type MemoryStateStore struct {
	// Now is the clock for lease expiry and retention. Defaults to the
	// clock of the Scheduler, Unregister or RunManual it is first handed
	// to with one, else time.Now.
	Now func() time.Time
	// Retention is how long a record survives its last write. Defaults to
	// StateRetentionDefault.
	Retention time.Duration

	adopted atomic.Pointer[func() time.Time]
	mu      sync.Mutex
	records map[string]memRecord
	leases  map[string]memLease
}

type memRecord struct {
	rec     StateRecord
	expires time.Time
}

type memLease struct {
	token   string
	expires time.Time
}

func (m *MemoryStateStore) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	if p := m.adopted.Load(); p != nil {
		return (*p)()
	}
	return time.Now()
}

// Load implements StateStore.
func (m *MemoryStateStore) Load(ctx context.Context, origin string) (StateRecord, error) {
	if err := ctx.Err(); err != nil {
		return StateRecord{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.records[origin]
	if !ok || !m.now().Before(r.expires) {
		delete(m.records, origin)
		return StateRecord{}, nil
	}
	return r.rec, nil
}

// Acquire implements StateStore.
func (m *MemoryStateStore) Acquire(ctx context.Context, origin string, ttl time.Duration) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if l, ok := m.leases[origin]; ok && now.Before(l.expires) {
		return "", ErrLeaseHeld
	}
	tok := NewLeaseToken()
	if m.leases == nil {
		m.leases = make(map[string]memLease)
	}
	m.leases[origin] = memLease{token: tok, expires: now.Add(ttl)}
	return tok, nil
}

// held reports whether token currently owns origin; m.mu must be held.
func (m *MemoryStateStore) held(origin, token string) bool {
	l, ok := m.leases[origin]
	return ok && token != "" && l.token == token && m.now().Before(l.expires)
}

// Renew implements StateStore.
func (m *MemoryStateStore) Renew(ctx context.Context, origin, token string, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.held(origin, token) {
		return ErrLeaseLost
	}
	m.leases[origin] = memLease{token: token, expires: m.now().Add(ttl)}
	return nil
}

// Release implements StateStore.
func (m *MemoryStateStore) Release(ctx context.Context, origin, token string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.held(origin, token) {
		return ErrLeaseLost
	}
	delete(m.leases, origin)
	return nil
}

// Save implements StateStore.
func (m *MemoryStateStore) Save(ctx context.Context, origin, token string, rec StateRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rec = rec.Normalize()
	if err := rec.Validate(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.held(origin, token) {
		return ErrLeaseLost
	}
	ret := m.Retention
	if ret <= 0 {
		ret = StateRetentionDefault
	}
	if m.records == nil {
		m.records = make(map[string]memRecord)
	}
	m.records[origin] = memRecord{rec: rec, expires: m.now().Add(ret)}
	return nil
}

// NewLeaseToken returns 128 random bits as hex, the token format every
// StateStore in this module hands out.
func NewLeaseToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}
