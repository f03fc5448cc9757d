package identity_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
	"github.com/fedkit/fedkit/internal/fixture"
)

type bundle struct {
	res    *identitytest.Resolver
	store  *identitytest.Store
	cstore *identity.MemoryCacheStore
	cache  *identity.Cache
	lock   *identity.MemoryLock
	r      *identity.Refresher
}

func ident(did identity.DID, h identity.Handle, pds string) identity.Identity {
	return identity.Identity{DID: did, Handle: h, DeclaredHandle: h, PDS: pds}
}

// setup builds a Refresher on fakes: alice is a stored user whose PLC entry
// now says new.bridge.test on the trusted bridge.
func setup(t *testing.T, mod func(*identity.RefresherConfig)) *bundle {
	t.Helper()
	b := &bundle{res: identitytest.NewResolver(), store: identitytest.NewStore(), cstore: &identity.MemoryCacheStore{}}
	var err error
	if b.cache, err = identity.NewCache(b.res, b.cstore, nil); err != nil {
		t.Fatal(err)
	}
	b.lock = identity.NewMemoryLock(2 * time.Second)
	cfg := &identity.RefresherConfig{Cache: b.cache, Lock: b.lock, TrustedHosts: []string{"pds.bridge.test"}}
	if mod != nil {
		mod(cfg)
	}
	if l, ok := cfg.Lock.(*identity.MemoryLock); ok {
		b.lock = l
	}
	if b.r, err = identity.NewRefresher(b.res, b.store, cfg); err != nil {
		t.Fatal(err)
	}
	b.store.Put(identity.Subject{DID: didA, Kind: identity.KindUser, Handle: "old.bridge.test", PDS: bridge})
	b.res.Set(ident(didA, "new.bridge.test", bridge))
	return b
}

func (b *bundle) handle(t *testing.T, did identity.DID) identity.Handle {
	t.Helper()
	row, ok := b.store.Row(did)
	if !ok {
		t.Fatalf("no row for %s", did)
	}
	return row.Handle
}

// cacheEntry seeds the cache as a read path would have.
func (b *bundle) cacheEntry(t *testing.T, did identity.DID, h identity.Handle) {
	t.Helper()
	if err := b.cstore.Put(context.Background(), identity.CacheEntry{Identity: ident(did, h, bridge), Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
}

func wantClass(t *testing.T, err error, class identity.Class, reason string, deferred bool) {
	t.Helper()
	var re *identity.RefreshError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want *RefreshError", err)
	}
	if re.Class != class || re.Reason != reason || re.Deferred != deferred {
		t.Fatalf("err = %v (class %s reason %s deferred %v), want %s %s %v", err, re.Class, re.Reason, re.Deferred, class, reason, deferred)
	}
	if errors.Is(err, identity.ErrUnresolved) != (class != identity.ClassPermanent) ||
		errors.Is(err, identity.ErrPermanent) != (class == identity.ClassPermanent) ||
		errors.Is(err, identity.ErrBusy) != (class == identity.ClassBusy) ||
		errors.Is(err, identity.ErrDeferred) != deferred {
		t.Fatalf("errors.Is mapping wrong for %v", err)
	}
}

func TestIdentityEventUnknownDIDCostsOneRead(t *testing.T) {
	b := setup(t, nil)
	if err := b.r.HandleIdentityEvent(context.Background(), identity.IdentityEvent{DID: string(didB), Handle: "bob.test"}); err != nil {
		t.Fatal(err)
	}
	if b.store.Reads() != 1 || b.res.TotalCalls() != 0 {
		t.Fatalf("reads = %d, resolver calls = %d; want 1, 0", b.store.Reads(), b.res.TotalCalls())
	}
}

func TestIdentityEventKnownDIDRefreshed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		handle string
	}{
		{"NoHandle", ""},
		{"StaleHandleIgnored", "old.bridge.test"},
		{"ForgedHandleIgnored", "evil.attacker.test"},
		{"HandleInvalid", "handle.invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, nil)
			if err := b.r.HandleIdentityEvent(context.Background(), identity.IdentityEvent{DID: string(didA), Handle: tc.handle}); err != nil {
				t.Fatal(err)
			}
			if got := b.handle(t, didA); got != "new.bridge.test" {
				t.Fatalf("stored = %q, want the resolved handle", got)
			}
			if b.res.Calls(didA) != 2 { // outside the lock, then the in-lock confirmation
				t.Fatalf("resolver calls = %d, want 2", b.res.Calls(didA))
			}
		})
	}
}

func TestIdentityEventFromFixtures(t *testing.T) {
	b := setup(t, nil)
	for _, f := range []string{"identity-no-handle.golden_v1.json", "identity-with-handle.atproto-crates.json"} {
		ev, err := identity.DecodeIdentityEvent(fixtureFrame(t, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		// Real DIDs unknown to the store: one read each, no resolution.
		if err := b.r.HandleIdentityEvent(context.Background(), ev); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if b.res.TotalCalls() != 0 || b.store.Reads() != 2 {
		t.Fatalf("resolver calls = %d, reads = %d", b.res.TotalCalls(), b.store.Reads())
	}
}

func TestIdentityEventMalformedDIDPermanent(t *testing.T) {
	b := setup(t, nil)
	err := b.r.HandleIdentityEvent(context.Background(), identity.IdentityEvent{DID: "did:key:z6Mk"})
	wantClass(t, err, identity.ClassPermanent, identity.ReasonInvalidDID, false)
	if b.store.Reads() != 0 {
		t.Fatal("malformed DID reached the store")
	}
}

func TestRefreshPurgesDIDAndOldHandle(t *testing.T) {
	b := setup(t, nil)
	b.cacheEntry(t, didA, "old.bridge.test")
	b.cacheEntry(t, didB, "new.bridge.test") // a stale row holding the new handle
	if err := b.r.RefreshHandle(context.Background(), didA); err != nil {
		t.Fatal(err)
	}
	if b.cstore.Len() != 0 {
		t.Fatalf("cache still holds %d entries", b.cstore.Len())
	}
	if b.handle(t, didA) != "new.bridge.test" || b.store.Writes() != 1 {
		t.Fatalf("stored %q after %d writes", b.handle(t, didA), b.store.Writes())
	}
}

func TestRefreshUnchangedWritesNothing(t *testing.T) {
	b := setup(t, nil)
	b.res.Set(ident(didA, "old.bridge.test", bridge))
	if err := b.r.RefreshHandle(context.Background(), didA); err != nil {
		t.Fatal(err)
	}
	if b.store.Writes() != 0 || b.res.Calls(didA) != 1 {
		t.Fatalf("writes = %d, calls = %d", b.store.Writes(), b.res.Calls(didA))
	}
}

// failingPurger fails PurgeHandle, the purge made inside the lock.
type failingPurger struct{ identity.Purger }

func (failingPurger) PurgeHandle(context.Context, identity.Handle) error {
	return errors.New("cache down")
}

func TestRefreshErrors(t *testing.T) {
	shortLock := func(c *identity.RefresherConfig) { c.Lock = identity.NewMemoryLock(50 * time.Millisecond) }
	for _, tc := range []struct {
		name     string
		mod      func(*identity.RefresherConfig)
		prep     func(t *testing.T, b *bundle)
		class    identity.Class
		reason   string
		deferred bool
	}{
		{"SubjectMismatch", nil, func(t *testing.T, b *bundle) { b.res.SetFor(didA, ident(didB, "new.bridge.test", bridge)) },
			identity.ClassPermanent, identity.ReasonSubjectMismatch, false},
		{"Unverified", nil, func(t *testing.T, b *bundle) { b.res.Set(ident(didA, identity.HandleInvalid, bridge)) },
			identity.ClassUnresolved, identity.ReasonUnverified, false},
		{"NotFound", nil, func(t *testing.T, b *bundle) { b.res.SetErr(didA, identity.ErrDIDNotFound) },
			identity.ClassUnresolved, identity.ReasonResolveFailed, false},
		{"HandleTaken", nil, func(t *testing.T, b *bundle) {
			b.store.Put(identity.Subject{DID: didB, Kind: identity.KindUser, Handle: "new.bridge.test"})
		}, identity.ClassUnresolved, identity.ReasonHandleTaken, false},
		{"StoreWriteFails", nil, func(t *testing.T, b *bundle) { b.store.SetHandleErr = errors.New("db down") },
			identity.ClassUnresolved, identity.ReasonStoreFailed, false},
		{"PurgeOldHandleFails", func(c *identity.RefresherConfig) { c.Cache = failingPurger{c.Cache} }, nil,
			identity.ClassUnresolved, identity.ReasonPurgeFailed, false},
		{"RowGoneBeforeLock", nil, func(t *testing.T, b *bundle) {
			b.res.Hook = func(context.Context, identity.DID) error { b.store.Delete(didA); return nil }
		}, identity.ClassUnresolved, identity.ReasonRowGone, false},
		{"BusyLock", shortLock, func(t *testing.T, b *bundle) { t.Cleanup(identitytest.HoldLock(t, b.lock, didA)) },
			identity.ClassBusy, identity.ReasonLockBusy, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, tc.mod)
			if tc.prep != nil {
				tc.prep(t, b)
			}
			err := b.r.RefreshHandle(context.Background(), didA)
			wantClass(t, err, tc.class, tc.reason, tc.deferred)
			if row, ok := b.store.Row(didA); ok && row.Handle != "old.bridge.test" {
				t.Fatalf("stored handle changed to %q", row.Handle)
			}
			if b.store.Writes() != 0 {
				t.Fatalf("writes = %d", b.store.Writes())
			}
		})
	}
}

func fixtureFrame(t *testing.T, name string) []byte {
	t.Helper()
	return fixture.Shared(t, "jetstream/"+name)
}

func TestTimeoutDebounce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := setup(t, func(c *identity.RefresherConfig) { c.ResolveTimeout = 5 * time.Second })
		ctx := context.Background()
		// A tarpit: the resolver answers only when its deadline ends it.
		b.res.Hook = func(ctx context.Context, _ identity.DID) error { <-ctx.Done(); return ctx.Err() }
		err := b.r.RefreshHandle(ctx, didA)
		wantClass(t, err, identity.ClassUnresolved, identity.ReasonResolveTimeout, false)

		// Within the TTL: the DID is still purged, resolution is skipped,
		// and the event defers without spending an attempt.
		b.cacheEntry(t, didA, "old.bridge.test")
		err = b.r.RefreshHandle(ctx, didA)
		wantClass(t, err, identity.ClassUnresolved, identity.ReasonDebounced, true)
		if b.res.Calls(didA) != 1 {
			t.Fatalf("resolver calls = %d, want 1", b.res.Calls(didA))
		}
		if b.cstore.Len() != 0 {
			t.Fatal("debounced refresh did not purge the DID")
		}

		// After the TTL the DID resolves again.
		time.Sleep(identity.DebounceTTLDefault)
		b.res.Hook = nil
		if err := b.r.RefreshHandle(ctx, didA); err != nil {
			t.Fatal(err)
		}
		if b.handle(t, didA) != "new.bridge.test" {
			t.Fatal("not refreshed after the debounce expired")
		}
	})
}

func TestDebounceNotRecorded(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(b *bundle) error
	}{
		{"FastFailure", func(b *bundle) error {
			b.res.SetErr(didA, identity.ErrDIDResolutionFailed)
			return b.r.RefreshHandle(context.Background(), didA)
		}},
		{"CallerCancelled", func(b *bundle) error {
			ctx, cancel := context.WithCancel(context.Background())
			b.res.Hook = func(c context.Context, _ identity.DID) error { cancel(); <-c.Done(); return c.Err() }
			return b.r.RefreshHandle(ctx, didA)
		}},
		{"CallerDeadlineShorterThanResolveTimeout", func(b *bundle) error {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			b.res.Hook = func(c context.Context, _ identity.DID) error { <-c.Done(); return c.Err() }
			return b.r.RefreshHandle(ctx, didA)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := setup(t, nil)
				if err := tc.run(b); !errors.Is(err, identity.ErrUnresolved) || errors.Is(err, identity.ErrDeferred) {
					t.Fatalf("first refresh: %v", err)
				}
				b.res.Hook = nil
				b.res.Set(ident(didA, "new.bridge.test", bridge))
				if err := b.r.RefreshHandle(context.Background(), didA); err != nil {
					t.Fatalf("second refresh was debounced or failed: %v", err)
				}
			})
		})
	}
}

func TestDebounceCapacityEvictsOldest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := setup(t, func(c *identity.RefresherConfig) { c.DebounceMaxEntries = 2; c.ResolveTimeout = time.Second })
		tarpit := func(c context.Context, _ identity.DID) error { <-c.Done(); return c.Err() }
		b.res.Hook = tarpit
		dids := []identity.DID{didA, didB, identitytest.DIDCarol}
		for _, d := range dids {
			_ = b.r.RefreshHandle(context.Background(), d)
		}
		// didA was the oldest and was evicted; didB and carol are live.
		// Check didA last: resolving it records it again.
		for _, d := range []identity.DID{identitytest.DIDCarol, didB, didA} {
			before := b.res.Calls(d)
			err := b.r.RefreshHandle(context.Background(), d)
			debounced := errors.Is(err, identity.ErrDeferred)
			if want := d != didA; debounced != want {
				t.Fatalf("%s debounced = %v, want %v (err %v)", d, debounced, want, err)
			}
			if !debounced && b.res.Calls(d) != before+1 {
				t.Fatalf("%s not resolved", d)
			}
		}
	})
}

func TestNilLockFailsClosedBeforePurge(t *testing.T) {
	for _, tc := range []struct {
		name string
		lock identity.Lock
	}{
		{"NilInterface", nil},
		{"TypedNil", (*identity.MemoryLock)(nil)},
		{"NegativeWait", identity.NewMemoryLock(-1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, func(c *identity.RefresherConfig) { c.Lock = tc.lock })
			b.cacheEntry(t, didA, "old.bridge.test")
			err := b.r.RefreshHandle(context.Background(), didA)
			wantClass(t, err, identity.ClassUnresolved, identity.ReasonLockUnavailable, false)
			if !errors.Is(err, identity.ErrLockUnavailable) {
				t.Fatalf("err = %v", err)
			}
			if b.cstore.Len() != 1 || b.res.TotalCalls() != 0 || b.store.Writes() != 0 {
				t.Fatalf("fail-closed refresh touched things: cache %d, calls %d, writes %d", b.cstore.Len(), b.res.TotalCalls(), b.store.Writes())
			}
		})
	}
}

// TestTwoRefreshersCannotRevert stages the race the lock exists for: A
// resolves before a rename and stalls; B resolves after it and writes; A
// then takes the lock with its stale answer.
func TestTwoRefreshersCannotRevert(t *testing.T) {
	b := setup(t, nil)
	b.res.Set(ident(didA, "old.bridge.test", bridge))
	b.store.Put(identity.Subject{DID: didA, Kind: identity.KindUser, Handle: "older.bridge.test", PDS: bridge})
	stale := identitytest.NewStaleResolver(b.res)
	r, err := identity.NewRefresher(stale, b.store, &identity.RefresherConfig{Cache: b.cache, Lock: b.lock})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var errA error
	wg.Go(func() { errA = r.RefreshHandle(context.Background(), didA) })
	<-stale.Resolved // A holds "old.bridge.test"
	b.res.Set(ident(didA, "new.bridge.test", bridge))
	if err := r.RefreshHandle(context.Background(), didA); err != nil {
		t.Fatalf("B: %v", err)
	}
	if b.handle(t, didA) != "new.bridge.test" {
		t.Fatal("B did not write")
	}
	close(stale.Release)
	wg.Wait()
	if errA != nil {
		t.Fatalf("A: %v", errA)
	}
	// And a stale event carrying the old handle changes nothing either.
	if err := r.HandleIdentityEvent(context.Background(), identity.IdentityEvent{DID: string(didA), Handle: "old.bridge.test"}); err != nil {
		t.Fatal(err)
	}
	if got := b.handle(t, didA); got != "new.bridge.test" {
		t.Fatalf("handle reverted to %q", got)
	}
}

type hooks struct {
	validate error
	hostedBy error
	calls    int
}

func (h *hooks) ValidateHandle(identity.Handle) error { h.calls++; return h.validate }
func (h *hooks) CheckHostedBy(context.Context, identity.Subject, *identity.Identity) error {
	return h.hostedBy
}

func TestCommunityRefresh(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hooks  *hooks
		class  identity.Class
		reason string
	}{
		{"Valid", &hooks{}, 0, ""},
		{"HandleRefused", &hooks{validate: errors.New("reserved name")}, identity.ClassPermanent, identity.ReasonInvalidHandle},
		{"HostedByMismatch", &hooks{hostedBy: identity.ErrHostedByMismatch}, identity.ClassPermanent, identity.ReasonHostedByMismatch},
		{"HostedByFetchFails", &hooks{hostedBy: errors.New("timeout")}, identity.ClassUnresolved, identity.ReasonHostedByPending},
		{"NoHooks", nil, identity.ClassPermanent, identity.ReasonInvalidHandle},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, func(c *identity.RefresherConfig) {
				if tc.hooks != nil {
					c.Community = tc.hooks
				}
			})
			b.store.Put(identity.Subject{DID: didA, Kind: identity.KindCommunity, Handle: "old.bridge.test", PDS: bridge, HostedBy: "did:web:bridge.test"})
			err := b.r.HandleIdentityEvent(context.Background(), identity.IdentityEvent{DID: string(didA)})
			if tc.class == 0 {
				if err != nil || b.handle(t, didA) != "new.bridge.test" {
					t.Fatalf("err %v, handle %q", err, b.handle(t, didA))
				}
				return
			}
			wantClass(t, err, tc.class, tc.reason, false)
			if b.handle(t, didA) != "old.bridge.test" {
				t.Fatal("old handle not kept")
			}
		})
	}
}

func TestOriginClearedOffBridge(t *testing.T) {
	for _, tc := range []struct {
		name        string
		id          identity.Identity
		hasOrigin   bool
		wantCleared bool
	}{
		{"StillOnBridge", ident(didA, "new.bridge.test", bridge), true, false},
		{"MovedToOtherPDS", ident(didA, "new.bridge.test", "https://pds.elsewhere.test"), true, true},
		{"HandleOutsideBridgeDomain", ident(didA, "alice.elsewhere.test", bridge), true, true},
		{"NoPDS", ident(didA, "new.bridge.test", ""), true, true},
		{"TrustedHostNormalised", ident(didA, "new.bridge.test", "HTTPS://PDS.Bridge.Test:443/"), true, false},
		{"NothingToClear", ident(didA, "new.bridge.test", "https://pds.elsewhere.test"), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, nil)
			b.store.Put(identity.Subject{DID: didA, Kind: identity.KindUser, Handle: "old.bridge.test", PDS: bridge, HasOrigin: tc.hasOrigin})
			b.res.Set(tc.id)
			if err := b.r.RefreshHandle(context.Background(), didA); err != nil {
				t.Fatal(err)
			}
			f, cleared := b.store.Origin(didA)
			if cleared != tc.wantCleared {
				t.Fatalf("cleared = %v, want %v", cleared, tc.wantCleared)
			}
			if cleared {
				for name, v := range map[string]*string{"origin": f.Origin, "username": f.Username, "url": f.URL, "software": f.Software} {
					if v == nil || *v != "" {
						t.Fatalf("%s = %v, want a visible clear (\"\")", name, v)
					}
				}
			}
		})
	}
}

// TestOriginClearedUnverifiedOffBridge: spec 5.2 clears on the PDS alone.
// A fresh document naming a PDS off the bridge clears the row's origin
// fields even when the handle does not verify (a bridge that was shut down
// answers no well-known); the refresh still fails unverified and writes no
// handle. A community whose stored PDS was not the bridge keeps its fields:
// its own-domain origin cannot be judged without a verified handle.
func TestOriginClearedUnverifiedOffBridge(t *testing.T) {
	const elsewhere = "https://pds.elsewhere.test"
	for _, tc := range []struct {
		name        string
		kind        identity.Kind
		hasOrigin   bool
		storedPDS   string
		freshPDS    string
		wantCleared bool
	}{
		{"UserOffBridge", identity.KindUser, true, bridge, elsewhere, true},
		{"UserNoPDS", identity.KindUser, true, bridge, "", true},
		{"UserOnBridge", identity.KindUser, true, bridge, bridge, false},
		{"UserNothingToClear", identity.KindUser, false, bridge, elsewhere, false},
		{"CommunityLeftBridge", identity.KindCommunity, true, bridge, elsewhere, true},
		{"NativeCommunityKept", identity.KindCommunity, true, elsewhere, elsewhere, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, nil)
			b.store.Put(identity.Subject{DID: didA, Kind: tc.kind, Handle: "old.bridge.test", PDS: tc.storedPDS, HasOrigin: tc.hasOrigin})
			b.res.Set(ident(didA, identity.HandleInvalid, tc.freshPDS))
			err := b.r.RefreshHandle(context.Background(), didA)
			wantClass(t, err, identity.ClassUnresolved, identity.ReasonUnverified, false)
			if _, cleared := b.store.Origin(didA); cleared != tc.wantCleared {
				t.Fatalf("cleared = %v, want %v", cleared, tc.wantCleared)
			}
			if b.store.Writes() != 0 || (!tc.wantCleared && b.store.Clears() != 0) {
				t.Fatalf("writes %d clears %d", b.store.Writes(), b.store.Clears())
			}
		})
	}
}

// A community that was never on the bridge holds its own-domain origin
// (spec 4.4): an identity refresh must not clear it. One whose stored PDS
// was the bridge and now is not has left the bridge and is cleared. When the
// application supplies the stored origin, a community off the bridge keeps
// exactly the origins spec 4.4 allows its verified handle, whatever its
// stored PDS.
func TestCommunityOriginOnRefresh(t *testing.T) {
	const elsewhere = "https://pds.elsewhere.test"
	for _, tc := range []struct {
		name        string
		handle      identity.Handle
		origin      string
		storedPDS   string
		freshPDS    string
		wantCleared bool
	}{
		{"NativeCommunityKeepsOrigin", "c.elsewhere.test", "", elsewhere, elsewhere, false},
		{"CommunityLeftBridge", "c.bridge.test", "", bridge, elsewhere, true},
		{"CommunityStillOnBridge", "c.bridge.test", "", bridge, bridge, false},
		{"NativeOwnDomainKept", "c.elsewhere.test", "elsewhere.test", elsewhere, elsewhere, false},
		{"NativeForeignOriginCleared", "c.elsewhere.test", "lemmy.example", elsewhere, elsewhere, true},
		{"LeftBridgeOwnDomainKept", "c.elsewhere.test", "elsewhere.test", bridge, elsewhere, false},
		{"LeftBridgeForeignCleared", "c.elsewhere.test", "lemmy.example", bridge, elsewhere, true},
		{"OnBridgeForeignKept", "c.bridge.test", "lemmy.example", bridge, bridge, false},
		{"HandleOwnNameCleared", "c.elsewhere.test", "c.elsewhere.test", elsewhere, elsewhere, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, func(c *identity.RefresherConfig) { c.Community = acceptHooks{} })
			b.store.Put(identity.Subject{DID: didA, Kind: identity.KindCommunity, Handle: tc.handle, PDS: tc.storedPDS, HasOrigin: true, Origin: tc.origin})
			b.res.Set(ident(didA, tc.handle, tc.freshPDS))
			if err := b.r.RefreshHandle(context.Background(), didA); err != nil {
				t.Fatal(err)
			}
			if _, cleared := b.store.Origin(didA); cleared != tc.wantCleared {
				t.Fatalf("cleared = %v, want %v", cleared, tc.wantCleared)
			}
		})
	}
}

func TestNewRefresherRefusesCachedResolver(t *testing.T) {
	c, err := identity.NewCache(identitytest.NewResolver(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := identity.NewRefresher(c, identitytest.NewStore(), nil); err == nil {
		t.Fatal("cached resolver accepted")
	}
}

func TestAccountEvent(t *testing.T) {
	for _, tc := range []struct {
		name        string
		ev          identity.AccountEvent
		wantCleared bool
	}{
		{"TakenDown", identity.AccountEvent{DID: string(didA), Status: "takendown"}, true},
		{"Deleted", identity.AccountEvent{DID: string(didA), Status: "deleted"}, true},
		{"Deactivated", identity.AccountEvent{DID: string(didA), Status: "deactivated"}, false},
		{"Active", identity.AccountEvent{DID: string(didA), Active: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, nil)
			b.store.Put(identity.Subject{DID: didA, Kind: identity.KindUser, Handle: "old.bridge.test", PDS: bridge, HasOrigin: true})
			b.cacheEntry(t, didA, "old.bridge.test")
			if err := b.r.HandleAccountEvent(context.Background(), tc.ev); err != nil {
				t.Fatal(err)
			}
			_, cleared := b.store.Origin(didA)
			if cleared != tc.wantCleared || (b.cstore.Len() == 0) != tc.wantCleared {
				t.Fatalf("cleared = %v, cache entries = %d", cleared, b.cstore.Len())
			}
			if b.res.TotalCalls() != 0 {
				t.Fatal("account event resolved")
			}
		})
	}
	t.Run("UnknownDID", func(t *testing.T) {
		b := setup(t, nil)
		if err := b.r.HandleAccountEvent(context.Background(), identity.AccountEvent{DID: string(didB), Status: "takendown"}); err != nil || b.store.Reads() != 1 {
			t.Fatalf("err %v, reads %d", err, b.store.Reads())
		}
	})
}

// TestRefreshOverNetwork runs the refresher on the real resolver over the
// offline network: a rename is written, and a tarpit PLC answer is
// debounced after one deadline hit.
func TestRefreshOverNetwork(t *testing.T) {
	t.Parallel()
	n := identitytest.NewNetwork(t)
	n.Claim(string(didA), "new.bridge.test", bridge)
	n.Claim(string(didB), "bob.bridge.test", bridge)
	n.Delay(string(didB), 10*time.Second) // the handler gives up when the client does
	store := identitytest.NewStore()
	store.Put(identity.Subject{DID: didA, Kind: identity.KindUser, Handle: "old.bridge.test", PDS: bridge})
	store.Put(identity.Subject{DID: didB, Kind: identity.KindUser, Handle: "bob.bridge.test", PDS: bridge})
	r, err := identity.NewRefresher(n.Resolver(t), store, &identity.RefresherConfig{
		Lock: identity.NewMemoryLock(time.Second), TrustedHosts: []string{"pds.bridge.test"}, ResolveTimeout: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := r.HandleIdentityEvent(ctx, identity.IdentityEvent{DID: string(didA)}); err != nil {
		t.Fatal(err)
	}
	if row, _ := store.Row(didA); row.Handle != "new.bridge.test" {
		t.Fatalf("handle = %q", row.Handle)
	}
	wantClass(t, r.HandleIdentityEvent(ctx, identity.IdentityEvent{DID: string(didB)}), identity.ClassUnresolved, identity.ReasonResolveTimeout, false)
	wantClass(t, r.HandleIdentityEvent(ctx, identity.IdentityEvent{DID: string(didB)}), identity.ClassUnresolved, identity.ReasonDebounced, true)
	if hits := n.PLCHits(string(didB)); hits != 1 {
		t.Fatalf("PLC hits for the tarpit DID = %d, want 1", hits)
	}
}

// TestRefreshDocumentNamesAnotherDID: a PLC directory or did:web host that
// serves a document whose id is another DID is a subject mismatch (spec
// 1.4, 3.4): permanent, not a resolve failure to redrive, and nothing is
// written, in a refresh and in a sweep.
func TestRefreshDocumentNamesAnotherDID(t *testing.T) {
	t.Parallel()
	n := identitytest.NewNetwork(t)
	n.SetDocument(string(didA), identitytest.Doc(string(didB), "new.bridge.test", bridge))
	n.SetWellKnown("new.bridge.test", string(didA))
	const web = identity.DID("did:web:web.bridge.test")
	n.SetDocument(string(web), identitytest.Doc(string(didB), "web.bridge.test", bridge))
	n.SetWellKnown("web.bridge.test", string(web))
	store := identitytest.NewStore()
	store.Put(identity.Subject{DID: didA, Kind: identity.KindUser, Handle: "old.bridge.test", PDS: bridge, HasOrigin: true})
	store.Put(identity.Subject{DID: web, Kind: identity.KindUser, Handle: "oldweb.bridge.test", PDS: bridge, HasOrigin: true})
	r, err := identity.NewRefresher(n.Resolver(t), store, &identity.RefresherConfig{
		Lock: identity.NewMemoryLock(time.Second), TrustedHosts: []string{"pds.bridge.test"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, did := range []identity.DID{didA, web} {
		err := r.HandleIdentityEvent(ctx, identity.IdentityEvent{DID: string(did)})
		wantClass(t, err, identity.ClassPermanent, identity.ReasonSubjectMismatch, false)
		if !errors.Is(err, identity.ErrSubjectMismatch) {
			t.Fatalf("%s: err = %v, want ErrSubjectMismatch", did, err)
		}
	}
	rep, err := r.Sweep(ctx, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Counts()[identity.ReasonSubjectMismatch]; got != 2 || len(rep.Rows) != 2 {
		t.Fatalf("sweep counts = %v, want 2 %s", rep.Counts(), identity.ReasonSubjectMismatch)
	}
	if store.Writes() != 0 {
		t.Fatalf("writes = %d", store.Writes())
	}
}

// storeOnly hides the Store's optional HandleHolder.
type storeOnly struct{ identity.Store }

// TestRefreshIncumbent: bob moved from new.bridge.test to bob2.bridge.test
// and alice took new.bridge.test; alice's event comes first. With a
// HandleHolder store bob is refreshed and alice's write goes through; a
// store without one, or an incumbent that does not resolve, leaves alice
// handle-taken for a redrive.
func TestRefreshIncumbent(t *testing.T) {
	for _, tc := range []struct {
		name      string
		hide      bool
		bobMoved  bool
		bobStays  bool // bob's fresh resolution still names the handle
		wantAlice identity.Handle
		wantBob   identity.Handle
		// Each try resolves alice twice (before the lock, and to confirm a
		// change inside it): one retry, only when bob let go.
		aliceCalls int
	}{
		{"IncumbentRefreshed", false, true, false, "new.bridge.test", "bob2.bridge.test", 4},
		{"IncumbentUnresolvable", false, false, false, "old.bridge.test", "new.bridge.test", 2},
		{"IncumbentStillHolds", false, false, true, "old.bridge.test", "new.bridge.test", 2},
		{"StoreWithoutHolderOf", true, true, false, "old.bridge.test", "new.bridge.test", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, nil)
			if tc.hide {
				var err error
				b.r, err = identity.NewRefresher(b.res, storeOnly{b.store}, &identity.RefresherConfig{Cache: b.cache, Lock: b.lock, TrustedHosts: []string{"pds.bridge.test"}})
				if err != nil {
					t.Fatal(err)
				}
			}
			b.store.Put(identity.Subject{DID: didB, Kind: identity.KindUser, Handle: "new.bridge.test"})
			if tc.bobMoved {
				b.res.Set(ident(didB, "bob2.bridge.test", bridge))
			}
			if tc.bobStays {
				b.res.Set(ident(didB, "new.bridge.test", bridge))
			}
			err := b.r.RefreshHandle(context.Background(), didA)
			if tc.wantAlice == "new.bridge.test" {
				if err != nil {
					t.Fatalf("RefreshHandle: %v", err)
				}
			} else {
				wantClass(t, err, identity.ClassUnresolved, identity.ReasonHandleTaken, false)
			}
			if got := b.handle(t, didA); got != tc.wantAlice {
				t.Errorf("alice = %q, want %q", got, tc.wantAlice)
			}
			if got := b.handle(t, didB); got != tc.wantBob {
				t.Errorf("bob = %q, want %q", got, tc.wantBob)
			}
			if got := b.res.Calls(didA); got != tc.aliceCalls {
				t.Errorf("alice resolved %d times, want %d", got, tc.aliceCalls)
			}
		})
	}
}

func TestTypedNilCacheIsNoCache(t *testing.T) {
	b := setup(t, nil)
	var none *identity.Cache
	r, err := identity.NewRefresher(b.res, b.store, &identity.RefresherConfig{Cache: none, Lock: b.lock})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.RefreshHandle(context.Background(), didA); err != nil {
		t.Fatal(err)
	}
	if b.handle(t, didA) != "new.bridge.test" {
		t.Fatal("not refreshed")
	}
}
