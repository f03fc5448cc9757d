package identity_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
)

// sweepSetup: alice needs an update, bob matches, carol is off the bridge's
// PDS list (not swept), dave does not verify.
const didDave = identity.DID("did:plc:dddddddddddddddddddddddd")

func sweepSetup(t *testing.T, mod func(*identity.RefresherConfig)) *bundle {
	b := setup(t, mod)
	b.store.Put(identity.Subject{DID: didB, Kind: identity.KindUser, Handle: "bob.bridge.test", PDS: bridge})
	b.res.Set(ident(didB, "bob.bridge.test", bridge))
	b.store.Put(identity.Subject{DID: identitytest.DIDCarol, Kind: identity.KindUser, Handle: "carol.bsky.test", PDS: "https://pds.elsewhere.test"})
	b.res.Set(ident(identitytest.DIDCarol, "carol2.bsky.test", "https://pds.elsewhere.test"))
	b.store.Put(identity.Subject{DID: didDave, Kind: identity.KindCommunity, Handle: "dave.bridge.test", PDS: "HTTPS://PDS.BRIDGE.TEST/"})
	b.res.Set(ident(didDave, identity.HandleInvalid, bridge))
	return b
}

func reasons(rep *identity.SweepReport) map[identity.DID]string {
	m := map[identity.DID]string{}
	for _, r := range rep.Rows {
		m[r.DID] = r.Reason
	}
	return m
}

func TestSweep(t *testing.T) {
	b := sweepSetup(t, nil)
	var mu sync.Mutex
	var progress []int
	rep, err := b.r.Sweep(context.Background(), b.store, &identity.SweepOpts{
		Concurrency: 3,
		Progress: func(p identity.SweepProgress) {
			mu.Lock()
			progress = append(progress, p.Done)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := reasons(rep)
	want := map[identity.DID]string{didA: identity.ReasonUpdated, didB: identity.ReasonMatched, didDave: identity.ReasonUnverified}
	if len(got) != len(want) {
		t.Fatalf("rows = %v, want %v", got, want)
	}
	for d, r := range want {
		if got[d] != r {
			t.Fatalf("%s: reason %q, want %q", d, got[d], r)
		}
	}
	if rep.AllMatched() {
		t.Fatal("AllMatched with an unverified row")
	}
	if len(progress) != 3 || progress[0] != 1 || progress[2] != 3 {
		t.Fatalf("progress = %v", progress)
	}
	if b.handle(t, didA) != "new.bridge.test" || b.handle(t, identitytest.DIDCarol) != "carol.bsky.test" {
		t.Fatal("sweep wrote the wrong rows")
	}
	if c := rep.Counts(); c[identity.ReasonUpdated] != 1 || c[identity.ReasonMatched] != 1 {
		t.Fatalf("counts = %v", c)
	}

	// Re-run after dave is fixed: every bridged row matches.
	b.res.Set(ident(didDave, "dave.bridge.test", bridge))
	rep, err = b.r.Sweep(context.Background(), b.store, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.AllMatched() {
		t.Fatalf("second run not all matched: %v", reasons(rep))
	}
}

func TestSweepDryRunWritesNothing(t *testing.T) {
	// No lock at all: a dry run must not need one.
	b := sweepSetup(t, func(c *identity.RefresherConfig) { c.Lock = nil })
	b.cacheEntry(t, didA, "old.bridge.test")
	rep, err := b.r.Sweep(context.Background(), b.store, &identity.SweepOpts{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := reasons(rep); got[didA] != identity.ReasonWouldUpdate || got[didB] != identity.ReasonMatched || got[didDave] != identity.ReasonUnverified {
		t.Fatalf("reasons = %v", got)
	}
	if rep.AllMatched() || !rep.DryRun {
		t.Fatal("dry run with a pending update reported all matched")
	}
	if b.store.Writes() != 0 || b.store.Clears() != 0 || b.cstore.Len() != 1 || b.handle(t, didA) != "old.bridge.test" {
		t.Fatalf("dry run wrote: writes %d, clears %d, cache %d", b.store.Writes(), b.store.Clears(), b.cstore.Len())
	}
}

func TestSweepOptions(t *testing.T) {
	b := sweepSetup(t, nil)
	ctx := context.Background()
	if _, err := b.r.Sweep(ctx, b.store, &identity.SweepOpts{DryRun: true, ClearCacheFirst: true}); !errors.Is(err, identity.ErrSweepOptions) {
		t.Fatalf("dry-run + clear: err = %v", err)
	}
	// ClearCacheFirst empties the whole cache, unrelated DIDs included, and
	// the Cache's negative entries with it.
	b.cacheEntry(t, identitytest.DIDCarol, "carol.bsky.test")
	gone := identity.DID("did:web:gone.test")
	_, _ = b.cache.LookupDID(ctx, gone) // not found: remembered
	if _, err := b.r.Sweep(ctx, b.store, &identity.SweepOpts{ClearCacheFirst: true}); err != nil {
		t.Fatal(err)
	}
	if b.cstore.Len() != 0 {
		t.Fatalf("cache has %d entries after ClearCacheFirst", b.cstore.Len())
	}
	_, _ = b.cache.LookupDID(ctx, gone)
	if b.res.Calls(gone) != 2 {
		t.Fatalf("negative entry survived ClearCacheFirst (resolver calls %d, want 2)", b.res.Calls(gone))
	}
	// TrustedHosts override the Refresher's: only carol's PDS now.
	rep, err := b.r.Sweep(ctx, b.store, &identity.SweepOpts{TrustedHosts: []string{"pds.elsewhere.test"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := reasons(rep); len(got) != 1 || got[identitytest.DIDCarol] != identity.ReasonUpdated {
		t.Fatalf("reasons = %v", got)
	}
	// No usable lock: a real run fails closed before clearing the cache.
	b3 := sweepSetup(t, func(c *identity.RefresherConfig) { c.Lock = nil })
	b3.cacheEntry(t, didA, "old.bridge.test")
	if _, err := b3.r.Sweep(ctx, b3.store, &identity.SweepOpts{ClearCacheFirst: true}); !errors.Is(err, identity.ErrLockUnavailable) {
		t.Fatalf("sweep without lock: err = %v", err)
	}
	if b3.cstore.Len() != 1 {
		t.Fatal("sweep without lock cleared the cache")
	}
	// No cache configured: ClearCacheFirst is refused.
	b2 := sweepSetup(t, func(c *identity.RefresherConfig) { c.Cache = nil })
	if _, err := b2.r.Sweep(ctx, b2.store, &identity.SweepOpts{ClearCacheFirst: true}); !errors.Is(err, identity.ErrSweepOptions) {
		t.Fatalf("clear without cache: err = %v", err)
	}
}

func TestSweepBusyRowReported(t *testing.T) {
	b := sweepSetup(t, func(c *identity.RefresherConfig) { c.Lock = identity.NewMemoryLock(50 * time.Millisecond) })
	release := identitytest.HoldLock(t, b.lock, didB)
	defer release()
	rep, err := b.r.Sweep(context.Background(), b.store, nil)
	if err != nil {
		t.Fatal(err)
	}
	// bob's handle already matches, but the locked refresh could not confirm it.
	if got := reasons(rep)[didB]; got != identity.ReasonLockBusy {
		t.Fatalf("bob: %q, want lock-busy", got)
	}
	if rep.AllMatched() {
		t.Fatal("AllMatched with a busy row")
	}
}

func TestSweepNeedsTrustedHosts(t *testing.T) {
	b := sweepSetup(t, func(c *identity.RefresherConfig) { c.TrustedHosts = nil })
	if _, err := b.r.Sweep(context.Background(), b.store, nil); !errors.Is(err, identity.ErrSweepOptions) {
		t.Fatalf("err = %v, want ErrSweepOptions", err)
	}
	if _, err := b.r.Sweep(context.Background(), b.store, &identity.SweepOpts{TrustedHosts: []string{" "}}); !errors.Is(err, identity.ErrSweepOptions) {
		t.Fatalf("blank hosts: err = %v, want ErrSweepOptions", err)
	}
}

func TestSweepReportJSON(t *testing.T) {
	rep := identity.SweepReport{Rows: []identity.SweepRow{{DID: didA, Kind: identity.KindCommunity, Stored: "a.test", Reason: identity.ReasonLockBusy, Err: errors.New("remote text")}}}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"dryRun":false,"rows":[{"did":"` + string(didA) + `","kind":"community","stored":"a.test","reason":"lock-busy"}]}`
	if string(b) != want {
		t.Fatalf("json = %s\nwant   %s", b, want)
	}
}

func TestSweepAllMatchedEmpty(t *testing.T) {
	// Vacuous truth: nothing bridged means nothing mismatched.
	if !(&identity.SweepReport{}).AllMatched() {
		t.Fatal("empty report not all matched")
	}
}

// listerOnly hides the Store's optional OriginLister.
type listerOnly struct{ identity.Lister }

// removedHostSetup: pds.old.test has just been removed from the trusted
// list (the Refresher trusts pds.bridge.test only, or trusted both with the
// sweep's TrustedHosts dropping it). Rows on it with origin fields are
// never listed by ListBridged.
func removedHostSetup(t *testing.T, mod func(*identity.RefresherConfig)) (*bundle, map[string]identity.DID) {
	t.Helper()
	const old = "https://pds.old.test"
	b := setup(t, mod)
	dids := map[string]identity.DID{}
	for i, r := range []struct {
		name      string
		kind      identity.Kind
		handle    identity.Handle
		origin    string
		hasOrigin bool
		storedPDS string
		freshPDS  string
	}{
		{"userStillOnOld", identity.KindUser, "u1.old.test", "", true, old, old},
		{"userBackOnBridge", identity.KindUser, "u2.bridge.test", "", true, old, bridge},
		{"userNoOrigin", identity.KindUser, "u3.old.test", "", false, old, old},
		{"communityForeign", identity.KindCommunity, "c1.old.test", "lemmy.example", true, old, old},
		{"communityOriginUnknown", identity.KindCommunity, "c2.old.test", "", true, old, old},
		{"communityNativeOwnDomain", identity.KindCommunity, "c-x.coves.test", "coves.test", true, "https://pds.coves.test", "https://pds.coves.test"},
	} {
		did := identity.DID("did:plc:" + strings.Repeat(string(rune('e'+i)), 24))
		dids[r.name] = did
		b.store.Put(identity.Subject{DID: did, Kind: r.kind, Handle: r.handle, PDS: r.storedPDS, HasOrigin: r.hasOrigin, Origin: r.origin})
		b.res.Set(ident(did, r.handle, r.freshPDS))
	}
	return b, dids
}

// TestSweepClearsOriginOnRemovedHost: spec 5.2, "a host is removed from the
// trusted list, when the sweep runs". With an OriginLister the sweep visits
// the rows holding origin fields off the list, once each, and clears those
// whose fresh resolution is off the bridge; a community keeps an origin
// spec 4.4 allows it, and one whose origin the application does not supply.
// Without an OriginLister nothing off the list is visited.
func TestSweepClearsOriginOnRemovedHost(t *testing.T) {
	want := map[string]bool{ // cleared?
		"userStillOnOld":           true,
		"userBackOnBridge":         false,
		"userNoOrigin":             false,
		"communityForeign":         true,
		"communityOriginUnknown":   false,
		"communityNativeOwnDomain": false,
	}
	for _, tc := range []struct {
		name string
		mod  func(*identity.RefresherConfig)
		opts *identity.SweepOpts
	}{
		{"RefresherList", nil, nil},
		// -trusted-hosts replaces the configured list for the run: the
		// clear decision follows it too.
		{"SweepTrustedHosts", func(c *identity.RefresherConfig) {
			c.TrustedHosts = []string{"pds.bridge.test", "pds.old.test"}
		}, &identity.SweepOpts{TrustedHosts: []string{"pds.bridge.test"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, dids := removedHostSetup(t, tc.mod)
			rep, err := b.r.Sweep(context.Background(), b.store, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			rows := map[identity.DID]identity.SweepRow{}
			for _, row := range rep.Rows {
				if _, dup := rows[row.DID]; dup {
					t.Fatalf("%s checked twice", row.DID)
				}
				rows[row.DID] = row
			}
			for name, did := range dids {
				_, cleared := b.store.Origin(did)
				if cleared != want[name] {
					t.Errorf("%s: cleared = %v, want %v", name, cleared, want[name])
				}
				row, visited := rows[did]
				if wantVisit := name != "userNoOrigin"; visited != wantVisit {
					t.Errorf("%s: visited = %v, want %v", name, visited, wantVisit)
					continue
				}
				if visited && (!row.OffList || row.OriginCleared != want[name] || !row.Matched()) {
					t.Errorf("%s: row = %+v", name, row)
				}
			}
			// alice is on the bridge: listed by ListBridged, not OffList.
			if row, ok := rows[didA]; !ok || row.OffList {
				t.Errorf("alice row = %+v, %v", row, ok)
			}
			if len(rows) != 6 {
				t.Errorf("rows = %d, want 6", len(rows))
			}
			// Back on the bridge: the fields stay.
			if row, _ := b.store.Row(dids["userBackOnBridge"]); !row.HasOrigin {
				t.Error("userBackOnBridge lost HasOrigin")
			}
		})
	}
	// The removed bridge is gone: its handles no longer verify, and the
	// fresh document's PDS alone clears the user's fields.
	t.Run("RemovedBridgeDead", func(t *testing.T) {
		b, dids := removedHostSetup(t, nil)
		did := dids["userStillOnOld"]
		b.res.Set(ident(did, identity.HandleInvalid, "https://pds.old.test"))
		rep, err := b.r.Sweep(context.Background(), b.store, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rep.Rows {
			if row.DID == did && (row.Reason != identity.ReasonUnverified || !row.OriginCleared || !row.OffList) {
				t.Fatalf("row = %+v", row)
			}
		}
		if _, cleared := b.store.Origin(did); !cleared {
			t.Fatal("origin kept")
		}
		if rep.AllMatched() {
			t.Fatal("an unverified row reads as all matched")
		}
	})
	t.Run("WithoutOriginLister", func(t *testing.T) {
		b, dids := removedHostSetup(t, nil)
		rep, err := b.r.Sweep(context.Background(), listerOnly{b.store}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Rows) != 1 || rep.Rows[0].DID != didA {
			t.Fatalf("rows = %+v, want alice only", rep.Rows)
		}
		if _, cleared := b.store.Origin(dids["userStillOnOld"]); cleared {
			t.Fatal("cleared without being visited")
		}
	})
	t.Run("DryRunWritesNothing", func(t *testing.T) {
		b, _ := removedHostSetup(t, nil)
		rep, err := b.r.Sweep(context.Background(), b.store, &identity.SweepOpts{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Rows) != 6 || b.store.Clears() != 0 || b.store.Writes() != 0 {
			t.Fatalf("rows %d clears %d writes %d", len(rep.Rows), b.store.Clears(), b.store.Writes())
		}
	})
}

// A listing error from ListWithOrigin is Sweep's error, after the rows
// already started have finished.
func TestSweepOriginListerError(t *testing.T) {
	b, _ := removedHostSetup(t, nil)
	boom := errors.New("scan failed")
	rep, err := b.r.Sweep(context.Background(), failingOriginLister{b.store, boom}, nil)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if len(rep.Rows) != 1 {
		t.Fatalf("rows = %d, want the bridged row", len(rep.Rows))
	}
}

type failingOriginLister struct {
	*identitytest.Store
	err error
}

func (f failingOriginLister) ListWithOrigin(context.Context, func(identity.Subject) error) error {
	return f.err
}
