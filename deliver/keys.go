package deliver

import (
	"context"
	"crypto"
	"sync"
	"time"

	"github.com/fedkit/fedkit/internal/clock"
)

// SenderKeys gives the deliverer the sender's signing key. The application
// implements it, typically over its own key table.
type SenderKeys interface {
	// Key returns the private key for keyID: a crypto.Signer such as an
	// *rsa.PrivateKey or ed25519.PrivateKey.
	Key(ctx context.Context, keyID string) (crypto.Signer, error)
	// Gone reports whether the sender owning keyID is gone for good
	// (deleted or suspended); see Config.PermanentIfSenderGone.
	Gone(ctx context.Context, keyID string) (bool, error)
}

// Key cache defaults.
const (
	KeyCacheTTLDefault        = 5 * time.Minute
	KeyCacheMaxEntriesDefault = 10_000
)

// CachingConfig configures a CachingSenderKeys.
type CachingConfig struct {
	// TTL is how long a loaded key is kept. Defaults to KeyCacheTTLDefault.
	TTL time.Duration
	// MaxEntries bounds the cache. Defaults to KeyCacheMaxEntriesDefault.
	MaxEntries int
	// Now returns the current time. Defaults to the clock of the
	// Deliverer the cache is handed to (its Config.Now), or time.Now
	// before that.
	Now func() time.Time
}

var _ SenderKeys = (*CachingSenderKeys)(nil)

// CachingSenderKeys keeps keys loaded through another SenderKeys for a
// while, so a send to thousands of inboxes loads its key once. Concurrent
// misses for one key share a single load; failed loads are not kept. Gone is
// passed through uncached, since it is asked only on a refusal.
type CachingSenderKeys struct {
	inner SenderKeys
	cfg   CachingConfig
	// clock is cfg.Now, or the clock of the first Deliverer handed c.
	clock *clock.Source

	mu       sync.Mutex
	entries  map[string]cachedKey
	inflight map[string]*keyLoad
}

type cachedKey struct {
	key     crypto.Signer
	expires time.Time
}

type keyLoad struct {
	done chan struct{}
	key  crypto.Signer
	err  error
}

// NewCachingSenderKeys wraps inner. A nil cfg means defaults.
func NewCachingSenderKeys(inner SenderKeys, cfg *CachingConfig) *CachingSenderKeys {
	c := &CachingSenderKeys{inner: inner, entries: map[string]cachedKey{}, inflight: map[string]*keyLoad{}}
	if cfg != nil {
		c.cfg = *cfg
	}
	if c.cfg.TTL <= 0 {
		c.cfg.TTL = KeyCacheTTLDefault
	}
	if c.cfg.MaxEntries <= 0 {
		c.cfg.MaxEntries = KeyCacheMaxEntriesDefault
	}
	c.clock = clock.New(c.cfg.Now)
	return c
}

func (c *CachingSenderKeys) now() time.Time { return c.clock.Now() }

// Key implements SenderKeys.
func (c *CachingSenderKeys) Key(ctx context.Context, keyID string) (crypto.Signer, error) {
	now := c.now()
	c.mu.Lock()
	if e, ok := c.entries[keyID]; ok && now.Before(e.expires) {
		c.mu.Unlock()
		return e.key, nil
	}
	l := c.inflight[keyID]
	if l == nil {
		l = &keyLoad{done: make(chan struct{})}
		c.inflight[keyID] = l
		c.mu.Unlock()
		go c.load(ctx, keyID, l)
	} else {
		c.mu.Unlock()
	}
	select {
	case <-l.done:
		return l.key, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// load runs detached from any one caller's context, so a caller giving up
// does not fail the others sharing the load.
func (c *CachingSenderKeys) load(ctx context.Context, keyID string, l *keyLoad) {
	l.key, l.err = c.inner.Key(context.WithoutCancel(ctx), keyID)
	c.mu.Lock()
	delete(c.inflight, keyID)
	if l.err == nil {
		if len(c.entries) >= c.cfg.MaxEntries {
			c.evict()
		}
		c.entries[keyID] = cachedKey{key: l.key, expires: c.now().Add(c.cfg.TTL)}
	}
	c.mu.Unlock()
	close(l.done)
}

// evict drops expired entries, or an arbitrary tenth when none has expired.
func (c *CachingSenderKeys) evict() {
	now := c.now()
	for k, e := range c.entries {
		if !now.Before(e.expires) {
			delete(c.entries, k)
		}
	}
	n := c.cfg.MaxEntries/10 + 1
	for k := range c.entries {
		if len(c.entries) < c.cfg.MaxEntries || n == 0 {
			break
		}
		delete(c.entries, k)
		n--
	}
}

// Gone implements SenderKeys.
func (c *CachingSenderKeys) Gone(ctx context.Context, keyID string) (bool, error) {
	return c.inner.Gone(ctx, keyID)
}

// Forget drops keyID's cached key, for a key that was rotated or revoked.
func (c *CachingSenderKeys) Forget(keyID string) {
	c.mu.Lock()
	delete(c.entries, keyID)
	c.mu.Unlock()
}
