package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/examples/appview/internal/ingest"
	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
	"github.com/fedkit/fedkit/identity/pgstore"
)

func TestIdentityEventsRefreshKnownAndIgnoreUnknown(t *testing.T) {
	t.Parallel()
	h := setup(t)
	alice, comm, stranger := plcDID("alice"), plcDID("comm"), plcDID("stranger")
	h.addUser(alice, "alice.lemmy-world.bridge.test", bridgePDS)
	h.addCommunity(comm, "news.lemmy-world.bridge.test", bridgePDS)
	// The bridge renamed both; PLC and well-known now say so.
	h.net.Claim(alice, "alice.lemmy.world.ap.bridge.test", bridgePDS)
	h.net.Claim(comm, "news.lemmy.world.ap.bridge.test", bridgePDS)
	h.net.Claim(stranger, "stranger.bsky.test", otherPDS)

	h.handle(identityFrame(alice, 10))
	h.handle(identityFrame(comm, 11))
	if got := h.actor(alice).Handle; got != "alice.lemmy.world.ap.bridge.test" {
		t.Errorf("user handle = %q, want the renamed handle", got)
	}
	if got := h.actor(comm).Handle; got != "news.lemmy.world.ap.bridge.test" {
		t.Errorf("community handle = %q, want the renamed handle", got)
	}

	before, hits := h.db.n.Load(), h.net.TotalHits()
	h.handle(identityFrame(stranger, 12))
	if q := h.db.n.Load() - before; q != 1 {
		t.Errorf("unknown DID cost %d queries, want 1", q)
	}
	if h.net.TotalHits() != hits || h.net.PLCHits(stranger) != 0 {
		t.Errorf("unknown DID was resolved (%d PLC hits)", h.net.PLCHits(stranger))
	}
	if h.exists(stranger) {
		t.Error("unknown DID got a row")
	}
	// Account events and posts of unknown DIDs cost the same single read.
	for _, f := range [][]byte{
		accountFrame(stranger, 13, false, "takendown"),
		commitFrame(stranger, "app.bsky.feed.post", "3lp1", "3lab1", "create", map[string]any{"text": "hi"}),
	} {
		before := h.db.n.Load()
		h.handle(f)
		if q := h.db.n.Load() - before; q != 1 {
			t.Errorf("unknown DID event cost %d queries, want 1", q)
		}
	}
}

func TestStaleIdentityEventCannotRevert(t *testing.T) {
	t.Parallel()
	h := setup(t)
	alice := plcDID("alice")
	h.addUser(alice, "alice.old.bridge.test", bridgePDS)
	h.net.Claim(alice, "alice.new.bridge.test", bridgePDS)
	h.handle(identityFrame(alice, 20))
	if got := h.actor(alice).Handle; got != "alice.new.bridge.test" {
		t.Fatalf("handle = %q after rename", got)
	}
	// A lagging source still answers with the old handle, and a replayed
	// older event arrives: the seq guard ignores it before any resolution.
	h.net.Claim(alice, "alice.old.bridge.test", bridgePDS)
	hits := h.net.PLCHits(alice)
	h.handle(identityFrame(alice, 19))
	if got := h.actor(alice).Handle; got != "alice.new.bridge.test" {
		t.Fatalf("stale event reverted the handle to %q", got)
	}
	if h.net.PLCHits(alice) != hits {
		t.Error("stale event was resolved")
	}
}

func TestProfileOriginAdmission(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		handle     string
		pds        string
		oneWay     bool // the handle does not verify both ways
		known      bool
		wantOrigin [4]string
		wantRow    bool
		wantQueued bool
	}{
		{name: "trusted bridge, handle under its domain", handle: "alice.lemmy.world.ap.bridge.test", pds: bridgePDS, known: true,
			wantOrigin: [4]string{"lemmy.world", "Alice", "https://lemmy.world/u/Alice", "lemmy"}, wantRow: true},
		{name: "new bridged user is created with fields", handle: "alice.lemmy.world.ap.bridge.test", pds: bridgePDS,
			wantOrigin: [4]string{"lemmy.world", "Alice", "https://lemmy.world/u/Alice", "lemmy"}, wantRow: true},
		{name: "untrusted PDS clears a known row", handle: "alice.elsewhere.test", pds: otherPDS, known: true,
			wantOrigin: cleared, wantRow: true},
		{name: "untrusted PDS drops an unknown user", handle: "alice.elsewhere.test", pds: otherPDS},
		{name: "handle outside the PDS's registrable domain", handle: "alice.evil.test", pds: bridgePDS, known: true,
			wantOrigin: cleared, wantRow: true},
		{name: "handle outside the domain, unknown user", handle: "alice.evil.test", pds: bridgePDS},
		{name: "unverified handle is redriven, nothing written", handle: "alice.lemmy.world.ap.bridge.test", pds: bridgePDS,
			oneWay: true, known: true, wantOrigin: [4]string{"<NULL>", "<NULL>", "<NULL>", "<NULL>"}, wantRow: true, wantQueued: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := setup(t)
			did := plcDID("alice")
			if tt.oneWay {
				h.net.ClaimOneWay(did, tt.handle, tt.pds)
			} else {
				h.net.Claim(did, tt.handle, tt.pds)
			}
			if tt.known {
				// The stored PDS says bridge: it must not admit anything.
				h.addUser(did, tt.handle, bridgePDS)
			}
			h.handle(profileFrame(did, "3laaa", bridgedFields("Alice", "lemmy.world")))
			if h.exists(did) != tt.wantRow {
				t.Fatalf("row exists = %v, want %v", h.exists(did), tt.wantRow)
			}
			if tt.wantRow {
				if got := originOf(h.actor(did)); got != tt.wantOrigin {
					t.Errorf("origin = %q, want %q", got, tt.wantOrigin)
				}
			}
			if n, _, _, _ := h.redriveRows(did); (n > 0) != tt.wantQueued {
				t.Errorf("redrive rows = %d, want queued %v", n, tt.wantQueued)
			}
		})
	}
}

func TestProfileStripsSpoofingCharacters(t *testing.T) {
	t.Parallel()
	h := setup(t)
	did := plcDID("alice")
	h.net.Claim(did, "alice.lemmy.world.ap.bridge.test", bridgePDS)
	f := bridgedFields("Ali\u202Ece\u200B", "lemmy.world")
	f["originUrl"] = "https://lemmy.world/u/Alice"
	h.handle(profileFrame(did, "3laaa", f))
	if got := deref(h.actor(did).Origin.Username); got != "Alice" {
		t.Fatalf("username = %q, want the spoofing characters stripped", got)
	}
}

func TestOlderProfileRevCannotOverwrite(t *testing.T) {
	t.Parallel()
	h := setup(t)
	did := plcDID("alice")
	h.net.Claim(did, "alice.lemmy.world.ap.bridge.test", bridgePDS)
	h.handle(profileFrame(did, "3lbbb", bridgedFields("Alice", "lemmy.world")))
	h.handle(profileFrame(did, "3laaa", bridgedFields("Mallory", "lemmy.world")))
	a := h.actor(did)
	if deref(a.Origin.Username) != "Alice" || a.DisplayName != "Name 3lbbb" {
		t.Fatalf("older rev overwrote: %q %q", deref(a.Origin.Username), a.DisplayName)
	}
}

func TestDIDLeavingTheBridgeIsCleared(t *testing.T) {
	t.Parallel()
	h := setup(t)
	mover, banned := plcDID("mover"), plcDID("banned")
	for _, did := range []string{mover, banned} {
		h.net.Claim(did, did[8:]+".lemmy.world.ap.bridge.test", bridgePDS)
		h.handle(profileFrame(did, "3laaa", bridgedFields("Someone", "lemmy.world")))
		if got := originOf(h.actor(did)); got[0] != "lemmy.world" {
			t.Fatalf("setup: origin = %q", got)
		}
	}
	// The account moved its repository off the bridge; its identity event
	// clears every field at once, not at the next profile event.
	h.net.Claim(mover, mover[8:]+".lemmy.world.ap.bridge.test", otherPDS)
	h.handle(identityFrame(mover, 30))
	if got := originOf(h.actor(mover)); got != cleared {
		t.Errorf("moved account origin = %q, want cleared ('')", got)
	}
	// A takedown clears too, and purges the identity cache.
	if _, err := h.app.cache.LookupDID(h.ctx, identity.DID(banned)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.app.cacheStore.Get(h.ctx, identity.DID(banned)); err != nil {
		t.Fatalf("setup: cache entry: %v", err)
	}
	h.handle(accountFrame(banned, 31, false, "takendown"))
	if _, err := h.app.cacheStore.Get(h.ctx, identity.DID(banned)); !errors.Is(err, identity.ErrCacheMiss) {
		t.Errorf("cache entry after takedown: %v, want purged", err)
	}
	a := h.actor(banned)
	if got := originOf(a); got != cleared {
		t.Errorf("taken-down account origin = %q, want cleared", got)
	}
	if a.AccountStatus != "takendown" {
		t.Errorf("status = %q", a.AccountStatus)
	}
	// A replayed older account event changes nothing.
	h.handle(accountFrame(banned, 30, true, ""))
	if got := h.actor(banned).AccountStatus; got != "takendown" {
		t.Errorf("stale account event set status %q", got)
	}
}

func TestRedriveBudget(t *testing.T) {
	t.Parallel()
	h := setup(t)
	alice := plcDID("alice")
	h.addUser(alice, "alice.old.bridge.test", bridgePDS)
	h.net.FailPLC(alice, 500)
	h.handle(identityFrame(alice, 40))
	if n, attempts, code, _ := h.redriveRows(alice); n != 1 || attempts != 0 || code != "resolve-failed" {
		t.Fatalf("after live failure: rows=%d attempts=%d code=%q", n, attempts, code)
	}
	for i := 1; i <= 3; i++ {
		h.clock.Add(RedriveIntervalDefault + time.Second)
		if _, err := h.app.ingester.RedriveOnce(h.ctx, ingest.DirectLanes); err != nil {
			t.Fatal(err)
		}
		_, attempts, _, dead := h.redriveRows(alice)
		if attempts != i || dead != (i == 3) {
			t.Fatalf("pass %d: attempts=%d dead=%v", i, attempts, dead)
		}
	}
	// A dead row is not retried even once the network recovers.
	h.net.Claim(alice, "alice.new.bridge.test", bridgePDS)
	h.clock.Add(RedriveIntervalDefault + time.Second)
	if n, err := h.app.ingester.RedriveOnce(h.ctx, ingest.DirectLanes); err != nil || n != 0 {
		t.Fatalf("dead row redriven: n=%d err=%v", n, err)
	}
}

func TestRedriveSucceedsAfterRecovery(t *testing.T) {
	t.Parallel()
	h := setup(t)
	alice := plcDID("alice")
	h.addUser(alice, "alice.old.bridge.test", bridgePDS)
	h.net.FailPLC(alice, 503)
	h.handle(identityFrame(alice, 40))
	h.net.FailPLC(alice, 0) // recovered
	h.net.Claim(alice, "alice.new.bridge.test", bridgePDS)
	// Not due yet: nothing happens.
	if n, _ := h.app.ingester.RedriveOnce(h.ctx, ingest.DirectLanes); n != 0 {
		t.Fatalf("redrove %d rows before they were due", n)
	}
	h.clock.Add(RedriveIntervalDefault + time.Second)
	if n, err := h.app.ingester.RedriveOnce(h.ctx, ingest.DirectLanes); err != nil || n != 1 {
		t.Fatalf("n=%d err=%v", n, err)
	}
	if got := h.actor(alice).Handle; got != "alice.new.bridge.test" {
		t.Fatalf("handle = %q", got)
	}
	if n, _, _, _ := h.redriveRows(alice); n != 0 {
		t.Fatal("done row not retired")
	}
}

func TestBusyLockDefersWithoutSpendingAttempts(t *testing.T) {
	t.Parallel()
	h := setup(t)
	alice := plcDID("alice")
	h.addUser(alice, "alice.old.bridge.test", bridgePDS)
	h.net.Claim(alice, "alice.new.bridge.test", bridgePDS)
	// Another process holds alice's refresh lock.
	conn, err := h.pool.Acquire(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	key := pgstore.LockKey(pgstore.NamespaceDefault, alice)
	if _, err := conn.Exec(h.ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		t.Fatal(err)
	}
	h.handle(identityFrame(alice, 50))
	if n, attempts, code, _ := h.redriveRows(alice); n != 1 || attempts != 0 || code != "lock-busy" {
		t.Fatalf("rows=%d attempts=%d code=%q, want one deferred lock-busy row", n, attempts, code)
	}
	h.clock.Add(time.Hour)
	if _, err := h.app.ingester.RedriveOnce(h.ctx, ingest.DirectLanes); err != nil {
		t.Fatal(err)
	}
	if _, attempts, _, dead := h.redriveRows(alice); attempts != 0 || dead {
		t.Fatalf("busy redrive spent an attempt: attempts=%d dead=%v", attempts, dead)
	}
	if _, err := conn.Exec(h.ctx, `SELECT pg_advisory_unlock($1)`, key); err != nil {
		t.Fatal(err)
	}
	conn.Release()
	h.clock.Add(time.Hour)
	if _, err := h.app.ingester.RedriveOnce(h.ctx, ingest.DirectLanes); err != nil {
		t.Fatal(err)
	}
	if got := h.actor(alice).Handle; got != "alice.new.bridge.test" {
		t.Fatalf("handle = %q after the lock was released", got)
	}
}

func TestCommunityProfileOrigin(t *testing.T) {
	t.Parallel()
	h := setup(t)
	comm, rogue := plcDID("comm"), plcDID("rogue")
	h.net.Claim(comm, "news.lemmy.world.ap.bridge.test", bridgePDS)
	h.net.Claim(rogue, "news.evil.test", otherPDS)
	h.addCommunity(rogue, "news.evil.test", otherPDS)
	f := map[string]any{"name": "news", "origin": "lemmy.world", "originUrl": "https://lemmy.world/c/news", "originSoftware": "Lemmy"}
	rec := map[string]any{"$type": "social.coves.community.profile", "displayName": "News"}
	for k, v := range f {
		rec[k] = v
	}
	h.handle(commitFrame(comm, "social.coves.community.profile", "self", "3laaa", "create", rec))
	h.handle(commitFrame(rogue, "social.coves.community.profile", "self", "3laaa", "create", rec))
	a := h.actor(comm)
	if a.Kind != "community" || a.Name != "news" {
		t.Fatalf("community row = %+v", a)
	}
	if got := originOf(a); got != [4]string{"lemmy.world", "<NULL>", "https://lemmy.world/c/news", "lemmy"} {
		t.Errorf("bridged community origin = %q", got)
	}
	if got := originOf(h.actor(rogue)); got != [4]string{"", "<NULL>", "", ""} {
		t.Errorf("community off the bridge origin = %q, want cleared", got)
	}
}

// TestOnlyBridgedProfilesGetRows: a profile creates a row only for a DID
// whose fresh DID document names a trusted bridge PDS (unless the operator
// indexes everyone). A handle that merely looks bridged admits nothing.
func TestOnlyBridgedProfilesGetRows(t *testing.T) {
	t.Parallel()
	h := setup(t)
	bridged, lookalike, native := plcDID("bridged"), plcDID("lookalike"), plcDID("native")
	h.net.Claim(bridged, "bridged.lemmy.world.ap.bridge.test", bridgePDS)
	// Bridge-shaped handle, verified both ways, on another PDS.
	h.net.Claim(lookalike, "lookalike.lemmy.world.ap.bridge.test", otherPDS)
	h.net.Claim(native, "native.elsewhere.test", otherPDS)
	for _, did := range []string{bridged, lookalike, native} {
		h.handle(profileFrame(did, "3laaa", nil)) // no origin fields asserted
	}
	if !h.exists(bridged) {
		t.Error("bridged DID got no row")
	}
	if h.exists(lookalike) || h.exists(native) {
		t.Errorf("rows for DIDs off the bridge: lookalike %v, native %v", h.exists(lookalike), h.exists(native))
	}
	// The bridge-shaped handle asserting origin fields is not admitted either.
	h.handle(profileFrame(lookalike, "3labb", bridgedFields("Look", "lemmy.world")))
	if h.exists(lookalike) {
		t.Error("bridge-shaped handle on another PDS was admitted")
	}

	// INDEX_ALL_PROFILES: every verified profile gets a row, with no origin.
	h.cfg.IndexAllProfiles = true
	h.app = h.newApp(h.db)
	h.handle(profileFrame(native, "3labb", nil))
	if !h.exists(native) {
		t.Fatal("IndexAllProfiles: verified profile got no row")
	}
	if got := originOf(h.actor(native)); got != [4]string{"<NULL>", "<NULL>", "<NULL>", "<NULL>"} {
		t.Errorf("IndexAllProfiles: origin = %q, want untouched", got)
	}
}

// TestStaleTakedownCannotClear: a lagging replay of a takedown that an
// account has since recovered from is ignored by the account seq guard,
// so it cannot clear the origin fields again.
func TestStaleTakedownCannotClear(t *testing.T) {
	t.Parallel()
	h := setup(t)
	did := plcDID("back")
	h.net.Claim(did, did[8:]+".lemmy.world.ap.bridge.test", bridgePDS)
	h.handle(profileFrame(did, "3laaa", bridgedFields("Back", "lemmy.world")))
	h.handle(accountFrame(did, 41, true, ""))
	h.handle(accountFrame(did, 40, false, "takendown"))
	a := h.actor(did)
	if got := originOf(a); got[1] != "Back" {
		t.Errorf("stale takedown cleared the origin: %q", got)
	}
	if a.AccountStatus != "" || a.AccountSeq != 41 {
		t.Errorf("account status %q seq %d, want active at 41", a.AccountStatus, a.AccountSeq)
	}
}

// TestPermanentEventsAreLoggedAndDropped: an event that can never succeed
// is logged with its reason and dropped: no write, no redrive row.
func TestPermanentEventsAreLoggedAndDropped(t *testing.T) {
	t.Parallel()
	h := setup(t)
	comm, bad := plcDID("comm"), plcDID("badrkey")
	h.addCommunity(comm, "news.lemmy.world.ap.bridge.test", bridgePDS)
	h.net.Claim(comm, "bare.test", bridgePDS) // refused by the community handle rule
	h.addUser(bad, "bad.lemmy.world.ap.bridge.test", bridgePDS)
	h.net.Claim(bad, "bad.lemmy.world.ap.bridge.test", bridgePDS)

	h.handle(identityFrame(comm, 10))
	h.handle(commitFrame(bad, "app.bsky.actor.profile", "other", "3laaa", "update", map[string]any{"displayName": "x"}))
	for did, reason := range map[string]string{comm: "invalid-handle", bad: "bad-rkey"} {
		if n, _, _, _ := h.redriveRows(did); n != 0 {
			t.Errorf("%s: permanent event queued for redrive", did)
		}
		if !strings.Contains(h.logs.String(), `msg="ingest: dropping event" did=`+did) {
			t.Errorf("%s: drop not logged", did)
		}
		if !strings.Contains(h.logs.String(), "reason="+reason) {
			t.Errorf("%s: reason %s not logged", did, reason)
		}
	}
	if t.Failed() {
		t.Log(h.logs.String())
	}
	if got := h.actor(comm).Handle; got != "news.lemmy.world.ap.bridge.test" {
		t.Errorf("community handle changed to %q", got)
	}
	if got := h.actor(bad).DisplayName; got != "" {
		t.Errorf("profile with a bad rkey applied: %q", got)
	}
}

// TestCreateSubjectMismatchIsPermanent: a profile from an unknown DID
// whose document names another DID can never create a row; retrying it
// would re-resolve the same document until the attempts run out.
func TestCreateSubjectMismatchIsPermanent(t *testing.T) {
	t.Parallel()
	h := setup(t)
	user, comm, other := plcDID("user"), plcDID("comm"), plcDID("other")
	h.net.Claim(other, "other.lemmy.world.ap.bridge.test", bridgePDS)
	h.net.SetDocument(user, identitytest.Doc(other, "user.lemmy.world.ap.bridge.test", bridgePDS))
	h.net.SetWellKnown("user.lemmy.world.ap.bridge.test", user)
	h.net.SetDocument(comm, identitytest.Doc(other, "news.lemmy.world.ap.bridge.test", bridgePDS))
	h.net.SetWellKnown("news.lemmy.world.ap.bridge.test", comm)

	// No origin fields: admission has nothing to resolve, so the row's
	// creation is what meets the document.
	h.handle(profileFrame(user, "3laaa", nil))
	h.handle(communityFrame(comm, "3laaa", nil))
	for _, did := range []string{user, comm} {
		if h.exists(did) {
			t.Errorf("%s: row created from a document naming another DID", did)
		}
		if n, _, code, _ := h.redriveRows(did); n != 0 {
			t.Errorf("%s: queued for redrive (%s), want dropped", did, code)
		}
		if !strings.Contains(h.logs.String(), `msg="ingest: dropping event" did=`+did) {
			t.Errorf("%s: drop not logged", did)
		}
	}
	if !strings.Contains(h.logs.String(), "reason="+identity.ReasonSubjectMismatch) {
		t.Errorf("reason %s not logged", identity.ReasonSubjectMismatch)
	}
	if t.Failed() {
		t.Log(h.logs.String())
	}
}
