package identity_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
)

func TestMemoryCacheStoreConformance(t *testing.T) {
	identitytest.TestCacheStore(t, func(testing.TB) identity.CacheStore { return &identity.MemoryCacheStore{} })
}

func TestMemoryLockConformance(t *testing.T) {
	identitytest.TestLock(t, func(_ testing.TB, wait time.Duration) identity.Lock { return identity.NewMemoryLock(wait) })
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
	t.Run("UnverifiedNotStoredButNegative", func(t *testing.T) {
		for range 2 {
			if id, err := c.LookupDID(ctx, didB); err != nil || id.Handle != identity.HandleInvalid {
				t.Fatalf("LookupDID = %+v, %v", id, err)
			}
		}
		if _, err := store.Get(ctx, didB); err == nil {
			t.Fatal("unverified identity written to the store")
		}
		// Within NegativeTTL the unverified answer comes from memory.
		if inner.Calls(didB) != 1 {
			t.Fatalf("inner calls = %d, want 1", inner.Calls(didB))
		}
		now = now.Add(identity.NegativeTTLDefault)
		if _, err := c.LookupDID(ctx, didB); err != nil || inner.Calls(didB) != 2 {
			t.Fatalf("after NegativeTTL: err %v, inner calls %d, want 2", err, inner.Calls(didB))
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

// failingDeleteStore is a CacheStore whose deletes fail.
type failingDeleteStore struct{ identity.MemoryCacheStore }

func (*failingDeleteStore) Delete(context.Context, identity.DID) error {
	return errors.New("store down")
}

// TestCacheNegative checks spec 3.2's negative cache: what is remembered,
// what never is, for how long, and that Purge forgets it.
func TestCacheNegative(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel2()
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		err    error
		cached bool
	}{
		{"NotFound", context.Background(), identity.ErrDIDNotFound, true},
		{"ResolutionFailed", context.Background(), fmt.Errorf("%w: status 502", identity.ErrDIDResolutionFailed), true},
		{"ResolverOwnDeadline", context.Background(), fmt.Errorf("plc: %w", context.DeadlineExceeded), true},
		{"CallerCancelled", cancelled, fmt.Errorf("%w: %w", identity.ErrDIDResolutionFailed, context.Canceled), false},
		// The resolver may report the caller's deadline as its own failure;
		// the caller's context decides.
		{"CallerDeadline", expired, fmt.Errorf("%w: client timeout", identity.ErrDIDResolutionFailed), false},
		{"CanceledWhileCallerLive", context.Background(), fmt.Errorf("%w: %w", identity.ErrDIDResolutionFailed, context.Canceled), false},
		{"InvalidDID", context.Background(), identity.ErrInvalidDID, false},
		{"UnclassifiedError", context.Background(), errors.New("something else"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			inner := identitytest.NewResolver()
			inner.SetErr(didA, tc.err)
			c, err := identity.NewCache(inner, nil, &identity.CacheConfig{Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if _, err := c.LookupDID(tc.ctx, didA); !errors.Is(err, tc.err) {
					t.Fatalf("LookupDID = %v, want %v", err, tc.err)
				}
			}
			want := 2
			if tc.cached {
				want = 1
			}
			if inner.Calls(didA) != want {
				t.Fatalf("inner calls = %d, want %d", inner.Calls(didA), want)
			}
		})
	}

	t.Run("ExpiresPurgesAndOff", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		clock := func() time.Time { return now }
		inner := identitytest.NewResolver()
		c, _ := identity.NewCache(inner, &failingDeleteStore{}, &identity.CacheConfig{NegativeTTL: time.Minute, Now: clock})
		lookup := func() {
			if _, err := c.LookupDID(ctx, didA); !errors.Is(err, identity.ErrDIDNotFound) {
				t.Fatalf("LookupDID = %v", err)
			}
		}
		lookup()
		now = now.Add(59 * time.Second)
		lookup()
		if inner.Calls(didA) != 1 {
			t.Fatalf("inner calls within TTL = %d, want 1", inner.Calls(didA))
		}
		now = now.Add(time.Second)
		lookup()
		if inner.Calls(didA) != 2 {
			t.Fatalf("inner calls after TTL = %d, want 2", inner.Calls(didA))
		}
		// Purge forgets the negative entry although the store's delete fails.
		if err := c.Purge(ctx, didA); err == nil {
			t.Fatal("Purge hid the store's error")
		}
		lookup()
		if inner.Calls(didA) != 3 {
			t.Fatalf("inner calls after Purge = %d, want 3", inner.Calls(didA))
		}

		off, _ := identity.NewCache(inner, nil, &identity.CacheConfig{NegativeTTL: -1, Now: clock})
		for range 2 {
			_, _ = off.LookupDID(ctx, didB)
		}
		if inner.Calls(didB) != 2 {
			t.Fatalf("NegativeTTL -1: inner calls = %d, want 2", inner.Calls(didB))
		}
	})

	t.Run("HandleFailuresNeverCached", func(t *testing.T) {
		t.Parallel()
		inner := identitytest.NewResolver()
		c, _ := identity.NewCache(inner, nil, nil)
		for range 2 {
			if _, err := c.ResolveHandle(context.Background(), "new.bridge.test"); !errors.Is(err, identity.ErrHandleNotFound) {
				t.Fatalf("ResolveHandle = %v", err)
			}
		}
		if inner.TotalCalls() != 2 {
			t.Fatalf("inner calls = %d, want 2", inner.TotalCalls())
		}
	})
}
