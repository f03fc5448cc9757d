package identitytest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/internal/suite"
)

// Test identifiers, valid under identity.ParseDID / ParseHandle.
const (
	DIDAlice = identity.DID("did:plc:aaaaaaaaaaaaaaaaaaaaaaaa")
	DIDBob   = identity.DID("did:plc:bbbbbbbbbbbbbbbbbbbbbbbb")
	DIDCarol = identity.DID("did:plc:cccccccccccccccccccccccc")
)

// TestCacheStore runs the identity.CacheStore conformance suite. newStore
// returns an empty store private to the subtest.
func TestCacheStore(t testing.TB, newStore func(t testing.TB) identity.CacheStore) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	entry := func(did identity.DID, h identity.Handle) identity.CacheEntry {
		return identity.CacheEntry{
			Identity: identity.Identity{DID: did, Handle: h, DeclaredHandle: h, PDS: "https://pds.bridge.test", SigningKey: "zKey", ResolvedAt: now},
			Expires:  now.Add(time.Hour),
		}
	}
	mustPut := func(t testing.TB, s identity.CacheStore, e identity.CacheEntry) {
		t.Helper()
		if err := s.Put(ctx, e); err != nil {
			t.Fatalf("Put: %v", err)
		}
	}
	wantMiss := func(t testing.TB, _ identity.CacheEntry, err error) {
		t.Helper()
		if !errors.Is(err, identity.ErrCacheMiss) {
			t.Fatalf("err = %v, want ErrCacheMiss", err)
		}
	}

	suite.Run(t, "MissOnEmpty", false, func(t testing.TB) {
		s := newStore(t)
		e, err := s.Get(ctx, DIDAlice)
		wantMiss(t, e, err)
		e, err = s.GetByHandle(ctx, "alice.bridge.test")
		wantMiss(t, e, err)
	})
	suite.Run(t, "PutGetRoundTrip", false, func(t testing.TB) {
		s := newStore(t)
		want := entry(DIDAlice, "alice.bridge.test")
		mustPut(t, s, want)
		got, err := s.Get(ctx, DIDAlice)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Expires.Equal(want.Expires) || !got.Identity.ResolvedAt.Equal(want.Identity.ResolvedAt) {
			t.Fatalf("times = %v/%v, want %v/%v", got.Expires, got.Identity.ResolvedAt, want.Expires, want.Identity.ResolvedAt)
		}
		got.Expires, got.Identity.ResolvedAt = want.Expires, want.Identity.ResolvedAt
		if got != want {
			t.Fatalf("Get = %+v, want %+v", got, want)
		}
		byH, err := s.GetByHandle(ctx, "alice.bridge.test")
		if err != nil || byH.Identity.DID != DIDAlice {
			t.Fatalf("GetByHandle = %+v, %v", byH, err)
		}
	})
	suite.Run(t, "ExpiredStillReturned", false, func(t testing.TB) {
		// Expiry is the Cache's decision, not the store's.
		s := newStore(t)
		e := entry(DIDAlice, "alice.bridge.test")
		e.Expires = now.Add(-time.Hour)
		mustPut(t, s, e)
		if _, err := s.Get(ctx, DIDAlice); err != nil {
			t.Fatalf("Get expired: %v", err)
		}
	})
	suite.Run(t, "PutReplacesHandle", false, func(t testing.TB) {
		s := newStore(t)
		mustPut(t, s, entry(DIDAlice, "old.bridge.test"))
		mustPut(t, s, entry(DIDAlice, "new.bridge.test"))
		e, err := s.GetByHandle(ctx, "old.bridge.test")
		wantMiss(t, e, err)
		if e, err := s.GetByHandle(ctx, "new.bridge.test"); err != nil || e.Identity.DID != DIDAlice {
			t.Fatalf("new handle = %+v, %v", e, err)
		}
	})
	suite.Run(t, "HandleMovesToNewDID", false, func(t testing.TB) {
		s := newStore(t)
		mustPut(t, s, entry(DIDAlice, "shared.bridge.test"))
		mustPut(t, s, entry(DIDBob, "shared.bridge.test"))
		if e, err := s.GetByHandle(ctx, "shared.bridge.test"); err != nil || e.Identity.DID != DIDBob {
			t.Fatalf("GetByHandle = %+v, %v, want bob", e, err)
		}
		e, err := s.Get(ctx, DIDAlice)
		wantMiss(t, e, err)
	})
	suite.Run(t, "DeleteByDID", false, func(t testing.TB) {
		s := newStore(t)
		mustPut(t, s, entry(DIDAlice, "alice.bridge.test"))
		mustPut(t, s, entry(DIDBob, "bob.bridge.test"))
		if err := s.Delete(ctx, DIDAlice); err != nil {
			t.Fatal(err)
		}
		e, err := s.Get(ctx, DIDAlice)
		wantMiss(t, e, err)
		e, err = s.GetByHandle(ctx, "alice.bridge.test")
		wantMiss(t, e, err)
		if _, err := s.Get(ctx, DIDBob); err != nil {
			t.Fatalf("bob gone: %v", err)
		}
		if err := s.Delete(ctx, DIDCarol); err != nil {
			t.Fatalf("Delete missing: %v", err)
		}
	})
	suite.Run(t, "DeleteByHandle", false, func(t testing.TB) {
		s := newStore(t)
		mustPut(t, s, entry(DIDAlice, "alice.bridge.test"))
		if err := s.DeleteHandle(ctx, "alice.bridge.test"); err != nil {
			t.Fatal(err)
		}
		e, err := s.Get(ctx, DIDAlice)
		wantMiss(t, e, err)
		if err := s.DeleteHandle(ctx, "nobody.bridge.test"); err != nil {
			t.Fatalf("DeleteHandle missing: %v", err)
		}
	})
	suite.Run(t, "ZeroHandleNotIndexed", false, func(t testing.TB) {
		s := newStore(t)
		mustPut(t, s, entry(DIDAlice, ""))
		mustPut(t, s, entry(DIDBob, ""))
		e, err := s.GetByHandle(ctx, "")
		wantMiss(t, e, err)
		if _, err := s.Get(ctx, DIDAlice); err != nil {
			t.Fatalf("alice: %v", err)
		}
	})
	suite.Run(t, "Clear", false, func(t testing.TB) {
		s := newStore(t)
		c, ok := s.(identity.CacheClearer)
		if !ok {
			t.Skip("store is not a CacheClearer")
		}
		mustPut(t, s, entry(DIDAlice, "alice.bridge.test"))
		mustPut(t, s, entry(DIDBob, "bob.bridge.test"))
		if err := c.Clear(ctx); err != nil {
			t.Fatal(err)
		}
		for _, did := range []identity.DID{DIDAlice, DIDBob} {
			e, err := s.Get(ctx, did)
			wantMiss(t, e, err)
		}
	})
}

// TestLock runs the identity.Lock conformance suite. newLock returns a lock
// that waits at most wait, private to the subtest; a negative wait must give
// an unusable lock. Waits here are short (a few hundred milliseconds) and
// only outcomes are asserted, never durations.
func TestLock(t testing.TB, newLock func(t testing.TB, wait time.Duration) identity.Lock) {
	ctx := context.Background()
	const wait = 300 * time.Millisecond

	hold := HoldLock

	suite.Run(t, "RunsFn", false, func(t testing.TB) {
		l := newLock(t, wait)
		ran := false
		if err := l.WithLock(ctx, DIDAlice, func(context.Context) error { ran = true; return nil }); err != nil {
			t.Fatal(err)
		}
		if !ran {
			t.Fatal("fn did not run")
		}
	})
	suite.Run(t, "ReturnsFnError", false, func(t testing.TB) {
		l := newLock(t, wait)
		boom := errors.New("boom")
		if err := l.WithLock(ctx, DIDAlice, func(context.Context) error { return boom }); !errors.Is(err, boom) {
			t.Fatalf("err = %v, want boom", err)
		}
		// And the lock was released.
		if err := l.WithLock(ctx, DIDAlice, func(context.Context) error { return nil }); err != nil {
			t.Fatalf("after error: %v", err)
		}
	})
	suite.Run(t, "ContentionIsBusy", false, func(t testing.TB) {
		l := newLock(t, wait)
		release := hold(t, l, DIDAlice)
		defer release()
		ran := false
		err := l.WithLock(ctx, DIDAlice, func(context.Context) error { ran = true; return nil })
		if !errors.Is(err, identity.ErrLockBusy) {
			t.Fatalf("err = %v, want ErrLockBusy", err)
		}
		if ran {
			t.Fatal("fn ran without the lock")
		}
	})
	suite.Run(t, "OtherDIDsIndependent", false, func(t testing.TB) {
		l := newLock(t, wait)
		release := hold(t, l, DIDAlice)
		defer release()
		if err := l.WithLock(ctx, DIDBob, func(context.Context) error { return nil }); err != nil {
			t.Fatalf("bob blocked by alice: %v", err)
		}
	})
	suite.Run(t, "Serialises", false, func(t testing.TB) {
		l := newLock(t, 10*time.Second)
		var inside, overlaps, runs atomic.Int32
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				err := l.WithLock(ctx, DIDAlice, func(context.Context) error {
					if inside.Add(1) > 1 {
						overlaps.Add(1)
					}
					time.Sleep(5 * time.Millisecond)
					inside.Add(-1)
					runs.Add(1)
					return nil
				})
				if err != nil {
					t.Errorf("WithLock: %v", err)
				}
			})
		}
		wg.Wait()
		if overlaps.Load() != 0 || runs.Load() != 6 {
			t.Fatalf("overlaps = %d, runs = %d", overlaps.Load(), runs.Load())
		}
	})
	suite.Run(t, "WaitsThenAcquires", false, func(t testing.TB) {
		l := newLock(t, 10*time.Second)
		release := hold(t, l, DIDAlice)
		got := make(chan error, 1)
		go func() { got <- l.WithLock(ctx, DIDAlice, func(context.Context) error { return nil }) }()
		// Give the waiter time to queue; a correct lock never lets it in
		// before release, however long this takes.
		time.Sleep(50 * time.Millisecond)
		select {
		case err := <-got:
			t.Fatalf("waiter returned (%v) while the lock was held", err)
		default:
		}
		release()
		if err := <-got; err != nil {
			t.Fatalf("waiter: %v", err)
		}
	})
	suite.Run(t, "CancelWhileWaiting", false, func(t testing.TB) {
		l := newLock(t, 10*time.Second)
		release := hold(t, l, DIDAlice)
		cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		ran := false
		err := l.WithLock(cctx, DIDAlice, func(context.Context) error { ran = true; return nil })
		if err == nil || ran || errors.Is(err, identity.ErrLockBusy) {
			t.Fatalf("cancelled waiter: err = %v, ran = %v; want a context error", err, ran)
		}
		release()
		// The abandoned acquire must not have left the lock held.
		if err := l.WithLock(ctx, DIDAlice, func(context.Context) error { return nil }); err != nil {
			t.Fatalf("after a cancelled waiter: %v", err)
		}
	})
	suite.Run(t, "NonPositiveWaitUnusable", false, func(t testing.TB) {
		l := newLock(t, -1)
		if l.Wait() > 0 {
			t.Fatalf("Wait = %v, want <= 0", l.Wait())
		}
		ran := false
		err := l.WithLock(ctx, DIDAlice, func(context.Context) error { ran = true; return nil })
		if err == nil || ran {
			t.Fatalf("unusable lock ran fn (err %v)", err)
		}
	})
}

// HoldLock takes did's lock on l in another goroutine and returns once it
// is held; calling the returned func (any number of times) releases it and
// reports the holder's error. For staging contention in tests.
func HoldLock(t testing.TB, l identity.Lock, did identity.DID) (release func()) {
	t.Helper()
	held, rel, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- l.WithLock(context.Background(), did, func(context.Context) error {
			close(held)
			<-rel
			return nil
		})
	}()
	select {
	case <-held:
	case err := <-done:
		t.Fatalf("holder: %v", err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			close(rel)
			if err := <-done; err != nil {
				t.Errorf("holder: %v", err)
			}
		})
	}
}
