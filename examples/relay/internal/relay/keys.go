package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/sig"
)

// Lookuper fetches a trusted ActivityPub document; *fetch.Fetcher is one.
type Lookuper interface {
	Lookup(ctx context.Context, rawURL string) (*fetch.Document, error)
}

// Key cache defaults.
const (
	KeyTTLDefault        = time.Hour
	KeyMaxEntriesDefault = 10_000
)

// ErrNoKey is returned when a fetched document does not publish the key.
var ErrNoKey = errors.New("relay: document does not publish the key")

// KeyCache resolves signature key IDs by fetching the key's document
// through a Lookuper (so through the guarded client), and keeps what it
// found for a while. It implements sig.KeyResolver.
type KeyCache struct {
	f          Lookuper
	ttl        time.Duration
	maxEntries int
	now        func() time.Time

	mu      sync.Mutex
	entries map[string]keyEntry
}

type keyEntry struct {
	key     *sig.Key
	fetched time.Time
}

var _ sig.KeyResolver = (*KeyCache)(nil)

// NewKeyCache returns a cache over f; ttl and maxEntries of 0 mean defaults.
func NewKeyCache(f Lookuper, ttl time.Duration, maxEntries int, now func() time.Time) *KeyCache {
	if ttl <= 0 {
		ttl = KeyTTLDefault
	}
	if maxEntries <= 0 {
		maxEntries = KeyMaxEntriesDefault
	}
	if now == nil {
		now = time.Now
	}
	return &KeyCache{f: f, ttl: ttl, maxEntries: maxEntries, now: now, entries: map[string]keyEntry{}}
}

type usedKeys struct{ ids []string }

type usedKeysKey struct{}

// noteKeys makes ResolveKey record, in ctx, which key IDs came from the cache,
// so a failed verification can refetch a key the sender may have rotated.
func noteKeys(ctx context.Context) (context.Context, *usedKeys) {
	u := &usedKeys{}
	return context.WithValue(ctx, usedKeysKey{}, u), u
}

// ResolveKey implements sig.KeyResolver.
func (c *KeyCache) ResolveKey(ctx context.Context, id sig.KeyID) (*sig.Key, error) {
	k := id.String()
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[k]
	c.mu.Unlock()
	if ok && now.Sub(e.fetched) < c.ttl {
		if u, _ := ctx.Value(usedKeysKey{}).(*usedKeys); u != nil {
			u.ids = append(u.ids, k)
		}
		return e.key, nil
	}
	key, err := c.fetch(ctx, id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.entries) >= c.maxEntries {
		// Dropping everything is crude but bounded; keys are refetched on use.
		clear(c.entries)
	}
	c.entries[k] = keyEntry{key: key, fetched: now}
	c.mu.Unlock()
	return key, nil
}

// Forget drops a cached key.
func (c *KeyCache) Forget(id string) {
	c.mu.Lock()
	delete(c.entries, id)
	c.mu.Unlock()
}

type publicKey struct {
	ID           string `json:"id"`
	Owner        string `json:"owner"`
	PublicKeyPem string `json:"publicKeyPem"`
}

type keyHolder struct {
	ID           string          `json:"id"`
	Owner        string          `json:"owner"`
	PublicKeyPem string          `json:"publicKeyPem"`
	PublicKey    json.RawMessage `json:"publicKey"`
}

func (c *KeyCache) fetch(ctx context.Context, id sig.KeyID) (*sig.Key, error) {
	doc, err := c.f.Lookup(ctx, id.Document())
	if err != nil {
		return nil, err
	}
	var h keyHolder
	if err := json.Unmarshal(doc.Raw, &h); err != nil {
		return nil, fmt.Errorf("relay: key document: %w", err)
	}
	if h.PublicKeyPem != "" {
		// A stand-alone key document (GoToSocial's /main-key): trust it only
		// if its owner's actor lists it too.
		if h.Owner == "" || h.ID != id.String() {
			return nil, ErrNoKey
		}
		owner, err := c.f.Lookup(ctx, h.Owner)
		if err != nil {
			return nil, err
		}
		var oh keyHolder
		if err := json.Unmarshal(owner.Raw, &oh); err != nil {
			return nil, fmt.Errorf("relay: key owner: %w", err)
		}
		pk, err := findKey(oh.PublicKey, id.String(), owner.ID)
		if err != nil {
			return nil, err
		}
		return parseKey(pk, owner.ID)
	}
	pk, err := findKey(h.PublicKey, id.String(), doc.ID)
	if err != nil {
		return nil, err
	}
	return parseKey(pk, doc.ID)
}

// findKey picks the key with id out of an actor's publicKey (an object or
// an array), owned by the actor.
func findKey(raw json.RawMessage, id, actor string) (publicKey, error) {
	var keys []publicKey
	if len(raw) > 0 && raw[0] == '[' {
		if err := json.Unmarshal(raw, &keys); err != nil {
			return publicKey{}, fmt.Errorf("relay: publicKey: %w", err)
		}
	} else if len(raw) > 0 {
		var k publicKey
		if err := json.Unmarshal(raw, &k); err != nil {
			return publicKey{}, fmt.Errorf("relay: publicKey: %w", err)
		}
		keys = append(keys, k)
	}
	for _, k := range keys {
		if k.ID == id && (k.Owner == "" || k.Owner == actor) && strings.TrimSpace(k.PublicKeyPem) != "" {
			return k, nil
		}
	}
	return publicKey{}, ErrNoKey
}

func parseKey(k publicKey, owner string) (*sig.Key, error) {
	pub, err := sig.ParsePublicKeyPEM([]byte(k.PublicKeyPem))
	if err != nil {
		return nil, err
	}
	return &sig.Key{Public: pub, Owner: owner}, nil
}
