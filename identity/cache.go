package identity

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/fedkit/fedkit/internal/clock"
)

// CacheEntry is one cached identity and when it stops being served.
type CacheEntry struct {
	// Identity is the cached identity.
	Identity Identity
	// Expires is when it stops being served.
	Expires time.Time
}

// CacheStore holds cached identities keyed by DID, findable by verified
// handle. Implementations: MemoryCacheStore and pgstore.CacheStore; both pass
// identitytest.TestCacheStore.
type CacheStore interface {
	// Get returns the entry for did, expired or not, or ErrCacheMiss.
	Get(ctx context.Context, did DID) (CacheEntry, error)
	// GetByHandle returns the entry whose verified handle is h, or ErrCacheMiss.
	GetByHandle(ctx context.Context, h Handle) (CacheEntry, error)
	// Put stores e, replacing any entry for the same DID. An entry of
	// another DID holding the same handle is removed, so a handle maps to
	// at most one DID.
	Put(ctx context.Context, e CacheEntry) error
	// Delete removes did's entry; a missing entry is not an error.
	Delete(ctx context.Context, did DID) error
	// DeleteHandle removes the entry holding handle h; missing is not an error.
	DeleteHandle(ctx context.Context, h Handle) error
}

// CacheClearer is a CacheStore that can be emptied at once (Sweep's
// ClearCacheFirst).
type CacheClearer interface {
	// Clear removes every entry.
	Clear(ctx context.Context) error
}

// Purger removes cached entries; the Refresher purges through it.
type Purger interface {
	// Purge removes did's cached entry.
	Purge(ctx context.Context, did DID) error
	// PurgeHandle removes the cached entry holding handle h.
	PurgeHandle(ctx context.Context, h Handle) error
}

// MemoryCacheStore is an in-process CacheStore. The zero value is ready.
type MemoryCacheStore struct {
	mu       sync.Mutex
	byDID    map[DID]CacheEntry
	byHandle map[Handle]DID
}

var (
	_ CacheStore   = (*MemoryCacheStore)(nil)
	_ CacheClearer = (*MemoryCacheStore)(nil)
)

func (m *MemoryCacheStore) init() {
	if m.byDID == nil {
		m.byDID = make(map[DID]CacheEntry)
		m.byHandle = make(map[Handle]DID)
	}
}

// Get implements CacheStore.
func (m *MemoryCacheStore) Get(_ context.Context, did DID) (CacheEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.byDID[did]
	if !ok {
		return CacheEntry{}, ErrCacheMiss
	}
	return e, nil
}

// GetByHandle implements CacheStore.
func (m *MemoryCacheStore) GetByHandle(_ context.Context, h Handle) (CacheEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	did, ok := m.byHandle[h]
	if !ok {
		return CacheEntry{}, ErrCacheMiss
	}
	return m.byDID[did], nil
}

// Put implements CacheStore.
func (m *MemoryCacheStore) Put(_ context.Context, e CacheEntry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	m.deleteLocked(e.Identity.DID)
	if h := e.Identity.Handle; !h.IsZero() {
		if other, ok := m.byHandle[h]; ok {
			m.deleteLocked(other)
		}
		m.byHandle[h] = e.Identity.DID
	}
	m.byDID[e.Identity.DID] = e
	return nil
}

func (m *MemoryCacheStore) deleteLocked(did DID) {
	if old, ok := m.byDID[did]; ok {
		if m.byHandle[old.Identity.Handle] == did {
			delete(m.byHandle, old.Identity.Handle)
		}
		delete(m.byDID, did)
	}
}

// Delete implements CacheStore.
func (m *MemoryCacheStore) Delete(_ context.Context, did DID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deleteLocked(did)
	return nil
}

// DeleteHandle implements CacheStore.
func (m *MemoryCacheStore) DeleteHandle(_ context.Context, h Handle) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if did, ok := m.byHandle[h]; ok {
		m.deleteLocked(did)
	}
	return nil
}

// Clear implements CacheClearer.
func (m *MemoryCacheStore) Clear(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.byDID, m.byHandle = nil, nil
	return nil
}

// Len returns the number of entries, for tests and metrics.
func (m *MemoryCacheStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byDID)
}

// Defaults for CacheConfig.
const (
	// CacheTTLDefault is how long a cached identity is served (Coves'
	// identity_cache).
	CacheTTLDefault = 24 * time.Hour
	// NegativeTTLDefault is how long a failed lookup is remembered (Coves'
	// IDENTITY_NEGATIVE_CACHE_TTL).
	NegativeTTLDefault = 90 * time.Second
	// NegativeMaxEntriesDefault bounds the negative cache.
	NegativeMaxEntriesDefault = 4096
)

// CacheConfig configures a Cache.
type CacheConfig struct {
	// TTL is how long an entry is served. Defaults to CacheTTLDefault.
	TTL time.Duration
	// NegativeTTL is how long a DID lookup that failed (not found,
	// resolution failed, or a deadline of the resolver's own while the
	// caller was still waiting) or found no verified handle is answered
	// from memory without asking Inner again. A negative value turns the
	// negative cache off. Defaults to NegativeTTLDefault.
	NegativeTTL time.Duration
	// NegativeMaxEntries bounds the negative cache; when full, expired
	// entries go first, then the oldest. Defaults to
	// NegativeMaxEntriesDefault.
	NegativeMaxEntries int
	// Now is the clock of every expiry. Defaults to the Refresher's clock
	// when the Cache is its RefresherConfig.Cache, else time.Now; an
	// HTTPResolver wrapped with no Now of its own takes this clock.
	Now func() time.Time
}

// Cache is the caching Resolver: it serves verified identities from a
// CacheStore and falls back to Inner. Never use it where freshness decides
// something (refresh, admission): use the inner resolver there.
//
// Failed DID lookups are also remembered, per process, for NegativeTTL, as
// Coves' negative cache does: keyed by DID only (a handle's failure is never
// cached, so a newly propagated DNS record is not hidden); a caller's
// cancellation or deadline and an invalid DID are never cached; Purge
// forgets the DID's negative entry even when the store's delete fails.
type Cache struct {
	inner    Resolver
	store    CacheStore
	cfg      CacheConfig
	clock    *clock.Source
	negative *expiring[negativeEntry] // nil when off
}

// negativeEntry is a remembered failure: an error, or an identity whose
// handle did not verify.
type negativeEntry struct {
	id  *Identity
	err error
}

var (
	_ Resolver = (*Cache)(nil)
	_ Purger   = (*Cache)(nil)
)

// NewCache wraps inner with store. A nil store means a new MemoryCacheStore.
func NewCache(inner Resolver, store CacheStore, cfg *CacheConfig) (*Cache, error) {
	if inner == nil {
		return nil, errors.New("identity: NewCache: nil resolver")
	}
	if store == nil {
		store = &MemoryCacheStore{}
	}
	c := &Cache{inner: inner, store: store}
	if cfg != nil {
		c.cfg = *cfg
	}
	if c.cfg.TTL <= 0 {
		c.cfg.TTL = CacheTTLDefault
	}
	if c.cfg.NegativeTTL == 0 {
		c.cfg.NegativeTTL = NegativeTTLDefault
	}
	if c.cfg.NegativeMaxEntries <= 0 {
		c.cfg.NegativeMaxEntries = NegativeMaxEntriesDefault
	}
	c.clock = clock.New(c.cfg.Now)
	c.cfg.Now = c.clock.Now
	adoptClock(inner, c.cfg.Now)
	if c.cfg.NegativeTTL > 0 {
		c.negative = newExpiring[negativeEntry](c.cfg.NegativeTTL, c.cfg.NegativeMaxEntries)
	}
	return c, nil
}

// Store returns the CacheStore, for Sweep's ClearCacheFirst.
func (c *Cache) Store() CacheStore { return c.store }

// LookupDID implements Resolver. Only identities with a verified handle are
// cached; a cached entry without one is purged and resolved again. Failures
// are remembered for NegativeTTL (see Cache).
func (c *Cache) LookupDID(ctx context.Context, did DID) (*Identity, error) {
	if c.negative != nil {
		if n, ok := c.negative.get(did, c.cfg.Now()); ok {
			if n.err != nil {
				return nil, n.err
			}
			id := *n.id
			return &id, nil
		}
	}
	e, err := c.store.Get(ctx, did)
	switch {
	case err == nil && c.cfg.Now().Before(e.Expires) && e.Identity.Handle.Resolvable():
		id := e.Identity
		return &id, nil
	case err == nil:
		if err := c.store.Delete(ctx, did); err != nil {
			return nil, err
		}
	case !errors.Is(err, ErrCacheMiss):
		return nil, err
	}
	id, err := c.inner.LookupDID(ctx, did)
	if err != nil {
		if c.negative != nil && negativeCacheable(ctx, err) {
			c.negative.put(did, c.cfg.Now(), negativeEntry{err: err})
		}
		return nil, err
	}
	if !id.Handle.Resolvable() {
		if c.negative != nil {
			keep := *id
			c.negative.put(did, c.cfg.Now(), negativeEntry{id: &keep})
		}
		return id, nil
	}
	// A failed cache write only costs a later miss.
	_ = c.store.Put(ctx, CacheEntry{Identity: *id, Expires: c.cfg.Now().Add(c.cfg.TTL)})
	return id, nil
}

// negativeCacheable reports whether a failed lookup is remembered: the DID
// was not found or did not resolve, or the resolver's own deadline passed;
// never when the caller gave up (cancelled or its deadline, whatever the
// resolver made of it) nor for an invalid DID, which no retry changes and
// which a caller can check for itself.
func negativeCacheable(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, ErrInvalidDID) {
		return false
	}
	return errors.Is(err, ErrDIDNotFound) || errors.Is(err, ErrDIDResolutionFailed) ||
		errors.Is(err, context.DeadlineExceeded)
}

// ResolveHandle implements Resolver, answering from a live cache entry.
func (c *Cache) ResolveHandle(ctx context.Context, h Handle) (DID, error) {
	if e, err := c.store.GetByHandle(ctx, h); err == nil && c.cfg.Now().Before(e.Expires) {
		return e.Identity.DID, nil
	}
	return c.inner.ResolveHandle(ctx, h)
}

// Purge removes did's entry (and with it its handle's mapping) and its
// negative entry; the negative entry goes even when the store fails.
func (c *Cache) Purge(ctx context.Context, did DID) error {
	if c.negative != nil {
		c.negative.remove(did)
	}
	return c.store.Delete(ctx, did)
}

// clearNegative forgets every negative entry, with the store's Clear.
func (c *Cache) clearNegative() {
	if c.negative != nil {
		c.negative.clear()
	}
}

// PurgeHandle removes the entry holding handle h.
func (c *Cache) PurgeHandle(ctx context.Context, h Handle) error {
	return c.store.DeleteHandle(ctx, h)
}
