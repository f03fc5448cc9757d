package fetch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fedkit/fedkit/sig"
)

// KeyResolver defaults.
const (
	// KeyTTLDefault is how long a resolved key is used before it is fetched
	// again.
	KeyTTLDefault = time.Hour
	// KeyNegativeTTLDefault is how long a failed resolution is remembered,
	// so a flood of requests naming a broken key costs one fetch.
	KeyNegativeTTLDefault = time.Minute
	// KeyRefetchIntervalDefault is the least time between two fetches of
	// one key that RefetchKey allows.
	KeyRefetchIntervalDefault = time.Minute
	// KeyMaxEntriesDefault bounds the cache, failures included.
	KeyMaxEntriesDefault = 10_000
)

// Lookuper fetches an established ActivityPub document; *Fetcher is one.
type Lookuper interface {
	Lookup(ctx context.Context, rawURL string) (*Document, error)
}

var _ Lookuper = (*Fetcher)(nil)

// KeyResolverConfig configures a KeyResolver. A nil *KeyResolverConfig
// means defaults.
type KeyResolverConfig struct {
	// Signer signs the key fetches, as the instance actor, for servers
	// that require authorized fetch; it applies when the Lookuper is a
	// *Fetcher. Defaults to nil: the Fetcher's own Config.Signer.
	Signer RequestSigner
	// TTL is how long a key is kept. Defaults to KeyTTLDefault.
	TTL time.Duration
	// NegativeTTL is how long a failure is kept. Defaults to
	// KeyNegativeTTLDefault.
	NegativeTTL time.Duration
	// DisableNegativeCache fetches again on every request after a
	// failure. Defaults to false.
	DisableNegativeCache bool
	// RefetchInterval is the least time between two fetches of one key
	// that RefetchKey allows. Defaults to KeyRefetchIntervalDefault.
	RefetchInterval time.Duration
	// MaxEntries bounds the cache. Defaults to KeyMaxEntriesDefault.
	MaxEntries int
	// Now is the clock of every expiry. Defaults to time.Now.
	Now func() time.Time
}

// KeyResolver is a sig.KeyResolver that fetches keys as the fediverse
// publishes them and caches what it found:
//
//   - "actor#main-key" (Mastodon, Misskey, Pleroma): the actor's publicKey,
//     an object or an array, Misskey's additionalPublicKeys (its Ed25519
//     key), or an FEP-521a Multikey in assertionMethod;
//   - "actor/main-key" (GoToSocial): a key document whose owner is the
//     actor, which is fetched too and must list the key;
//
// and in either case the key and its owner name each other on one origin.
// The Key's Owner is the actor. Keys are kept for TTL, failures for
// NegativeTTL; concurrent misses for one key share one fetch. A 410 is an
// error matching ErrGone and sig.ErrGone. It is safe for concurrent use;
// the returned *sig.Key is shared and must not be modified.
type KeyResolver struct {
	docs  Lookuper
	cfg   KeyResolverConfig
	loads atomic.Int64

	mu       sync.Mutex
	entries  map[string]*cachedKey
	inflight map[string]*keyLoad
}

var _ sig.KeyResolver = (*KeyResolver)(nil)

type cachedKey struct {
	key     *sig.Key
	err     error
	expires time.Time
	// refetched is when RefetchKey last fetched the key: its rate limit.
	refetched time.Time
}

type keyLoad struct {
	done chan struct{}
	key  *sig.Key
	err  error
}

// NewKeyResolver returns a KeyResolver fetching through docs, usually the
// application's *Fetcher.
func NewKeyResolver(docs Lookuper, cfg *KeyResolverConfig) (*KeyResolver, error) {
	if docs == nil {
		return nil, errors.New("fetch: NewKeyResolver: nil Lookuper")
	}
	r := &KeyResolver{docs: docs, entries: map[string]*cachedKey{}, inflight: map[string]*keyLoad{}}
	if cfg != nil {
		r.cfg = *cfg
	}
	c := &r.cfg
	if s := nilSigner(c.Signer); s != nil {
		if f, ok := docs.(*Fetcher); ok {
			r.docs = f.WithSigner(s)
		}
	}
	if c.TTL == 0 {
		c.TTL = KeyTTLDefault
	}
	if c.NegativeTTL == 0 {
		c.NegativeTTL = KeyNegativeTTLDefault
	}
	if c.RefetchInterval == 0 {
		c.RefetchInterval = KeyRefetchIntervalDefault
	}
	if c.MaxEntries == 0 {
		c.MaxEntries = KeyMaxEntriesDefault
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.TTL < 0 || c.NegativeTTL < 0 || c.RefetchInterval < 0 || c.MaxEntries < 0 {
		return nil, errors.New("fetch: NewKeyResolver: negative TTL, NegativeTTL, RefetchInterval or MaxEntries")
	}
	return r, nil
}

// ResolveKey implements sig.KeyResolver.
func (r *KeyResolver) ResolveKey(ctx context.Context, id sig.KeyID) (*sig.Key, error) {
	k := id.String()
	now := r.cfg.Now()
	r.mu.Lock()
	if e, ok := r.entries[k]; ok && now.Before(e.expires) {
		r.mu.Unlock()
		return e.key, e.err
	}
	l := r.startLocked(ctx, id)
	r.mu.Unlock()
	return wait(ctx, l)
}

// RefetchKey fetches id again, ignoring the cache, for a signature that
// failed with the cached key (the sender may have rotated it). It is
// refused with ErrRefetchTooSoon when RefetchKey fetched the key less than
// RefetchInterval ago, so a stream of bad signatures costs at most one
// fetch per key per interval. A refetch that fails for a passing reason
// (a timeout, a 5xx) keeps the cached key.
func (r *KeyResolver) RefetchKey(ctx context.Context, id sig.KeyID) (*sig.Key, error) {
	k := id.String()
	now := r.cfg.Now()
	r.mu.Lock()
	e, ok := r.entries[k]
	if ok && !e.refetched.IsZero() && now.Sub(e.refetched) < r.cfg.RefetchInterval {
		r.mu.Unlock()
		return nil, ErrRefetchTooSoon
	}
	if !ok {
		// Remember the refetch even before the fetch ends, so concurrent
		// refetches join it and later ones wait out the interval.
		e = &cachedKey{err: ErrNoKey}
		r.putLocked(k, e)
	}
	e.refetched = now
	l := r.startLocked(ctx, id)
	r.mu.Unlock()
	return wait(ctx, l)
}

// Forget drops what is cached for id.
func (r *KeyResolver) Forget(id sig.KeyID) {
	r.mu.Lock()
	delete(r.entries, id.String())
	r.mu.Unlock()
}

// Fetches returns how many key resolutions went to the network.
func (r *KeyResolver) Fetches() int64 { return r.loads.Load() }

func wait(ctx context.Context, l *keyLoad) (*sig.Key, error) {
	select {
	case <-l.done:
		return l.key, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// startLocked joins the fetch in flight for id or starts one; r.mu is held.
func (r *KeyResolver) startLocked(ctx context.Context, id sig.KeyID) *keyLoad {
	k := id.String()
	if l := r.inflight[k]; l != nil {
		return l
	}
	l := &keyLoad{done: make(chan struct{})}
	r.inflight[k] = l
	go r.load(ctx, id, l)
	return l
}

// load runs detached from the caller's cancellation, so one caller giving
// up does not fail the others sharing the fetch (its values, a fetch
// Budget among them, are kept).
func (r *KeyResolver) load(ctx context.Context, id sig.KeyID, l *keyLoad) {
	r.loads.Add(1)
	l.key, l.err = r.fetch(context.WithoutCancel(ctx), id)
	k := id.String()
	now := r.cfg.Now()
	r.mu.Lock()
	delete(r.inflight, k)
	prev := r.entries[k]
	var refetched time.Time
	if prev != nil {
		refetched = prev.refetched
	}
	switch {
	case l.err == nil:
		r.putLocked(k, &cachedKey{key: l.key, expires: now.Add(r.cfg.TTL), refetched: refetched})
	case prev != nil && prev.key != nil && now.Before(prev.expires) && !errors.Is(l.err, ErrNoKey) && !errors.Is(l.err, ErrGone):
		// A refetch that failed for a passing reason keeps the key it
		// meant to replace.
	case !cacheable(l.err) || r.cfg.DisableNegativeCache:
		if prev != nil && prev.key == nil {
			delete(r.entries, k)
		}
	default:
		r.putLocked(k, &cachedKey{err: l.err, expires: now.Add(r.cfg.NegativeTTL), refetched: refetched})
	}
	r.mu.Unlock()
	close(l.done)
}

// cacheable reports failures worth remembering: all but an exhausted
// per-request budget, which says nothing of the key. (The fetch runs
// detached from the caller's cancellation, so a deadline here is the
// Fetcher's own timeout: a slow server, worth remembering.)
func cacheable(err error) bool { return !errors.Is(err, ErrBudgetExhausted) }

// putLocked stores e, making room first: expired entries go, then an
// arbitrary tenth when none had expired.
func (r *KeyResolver) putLocked(k string, e *cachedKey) {
	if _, ok := r.entries[k]; !ok && len(r.entries) >= r.cfg.MaxEntries {
		now := r.cfg.Now()
		for key, old := range r.entries {
			if !now.Before(old.expires) {
				delete(r.entries, key)
			}
		}
		n := r.cfg.MaxEntries/10 + 1
		for key := range r.entries {
			if len(r.entries) < r.cfg.MaxEntries || n == 0 {
				break
			}
			delete(r.entries, key)
			n--
		}
	}
	r.entries[k] = e
}

// fetch resolves id from the network: its document, then for a
// stand-alone key document the owner, which must list the key.
func (r *KeyResolver) fetch(ctx context.Context, id sig.KeyID) (*sig.Key, error) {
	doc, err := r.docs.Lookup(ctx, id.Document())
	if err != nil {
		return nil, gone(id, id.Document(), err)
	}
	key, owner, err := parseKeyDocument(doc.Raw, doc.ID, id)
	if err != nil {
		return nil, err
	}
	if owner == "" {
		return key, nil
	}
	od, err := r.docs.Lookup(ctx, owner)
	if err != nil {
		return nil, gone(id, owner, err)
	}
	if err := checkKeyOwner(od.Raw, od.ID, id, key); err != nil {
		return nil, err
	}
	return key, nil
}

// gone turns a 410 into a keyGoneError and labels other failures.
func gone(id sig.KeyID, url string, err error) error {
	if errors.Is(err, ErrGone) {
		return &keyGoneError{keyID: id.String(), url: url}
	}
	return fmt.Errorf("fetch: key %s: %w", clip(id.String()), err)
}
