package identity_test

import (
	"context"
	"testing"
	"time"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
)

func TestMemoryCacheStoreConformance(t *testing.T) {
	identitytest.TestCacheStore(t, func(*testing.T) identity.CacheStore { return &identity.MemoryCacheStore{} })
}

func TestMemoryLockConformance(t *testing.T) {
	identitytest.TestLock(t, func(_ *testing.T, wait time.Duration) identity.Lock { return identity.NewMemoryLock(wait) })
}

func TestCache(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	inner := identitytest.NewResolver()
	inner.Set(ident(didA, "alice.bridge.test", bridge))
	inner.Set(ident(didB, identity.HandleInvalid, bridge))
	store := &identity.MemoryCacheStore{}
	c, err := identity.NewCache(inner, store, &identity.CacheConfig{TTL: time.Hour, Now: clock})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("HitServesFromStore", func(t *testing.T) {
		for range 3 {
			id, err := c.LookupDID(ctx, didA)
			if err != nil || id.Handle != "alice.bridge.test" {
				t.Fatalf("LookupDID = %+v, %v", id, err)
			}
		}
		if inner.Calls(didA) != 1 {
			t.Fatalf("inner calls = %d, want 1", inner.Calls(didA))
		}
		if d, err := c.ResolveHandle(ctx, "alice.bridge.test"); err != nil || d != didA || inner.TotalCalls() != 1 {
			t.Fatalf("ResolveHandle = %q, %v (inner calls %d)", d, err, inner.TotalCalls())
		}
	})
	t.Run("UnverifiedNotCached", func(t *testing.T) {
		for range 2 {
			if _, err := c.LookupDID(ctx, didB); err != nil {
				t.Fatal(err)
			}
		}
		if inner.Calls(didB) != 2 {
			t.Fatalf("inner calls = %d, want 2", inner.Calls(didB))
		}
	})
	t.Run("ExpiredResolvedAgain", func(t *testing.T) {
		before := inner.Calls(didA)
		now = now.Add(2 * time.Hour)
		if _, err := c.LookupDID(ctx, didA); err != nil {
			t.Fatal(err)
		}
		if inner.Calls(didA) != before+1 {
			t.Fatal("expired entry served")
		}
	})
	t.Run("PurgeByDIDAndHandle", func(t *testing.T) {
		if err := c.Purge(ctx, didA); err != nil {
			t.Fatal(err)
		}
		if store.Len() != 0 {
			t.Fatal("Purge left the entry")
		}
		if _, err := c.LookupDID(ctx, didA); err != nil {
			t.Fatal(err)
		}
		if err := c.PurgeHandle(ctx, "alice.bridge.test"); err != nil {
			t.Fatal(err)
		}
		if store.Len() != 0 {
			t.Fatal("PurgeHandle left the entry")
		}
	})
	t.Run("CachedRowWithoutHandlePurged", func(t *testing.T) {
		_ = store.Put(ctx, identity.CacheEntry{Identity: ident(didB, identity.HandleInvalid, bridge), Expires: now.Add(time.Hour)})
		before := inner.Calls(didB)
		if _, err := c.LookupDID(ctx, didB); err != nil {
			t.Fatal(err)
		}
		if inner.Calls(didB) != before+1 || store.Len() != 0 {
			t.Fatalf("row without a usable handle served (calls %d, len %d)", inner.Calls(didB)-before, store.Len())
		}
	})
}
