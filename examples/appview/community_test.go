package main

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/examples/appview/internal/ingest"
	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
)

func communityFrame(did, rev string, fields map[string]any) []byte {
	rec := map[string]any{"$type": "social.coves.community.profile", "displayName": "Community " + rev, "name": "c"}
	for k, v := range fields {
		rec[k] = v
	}
	return commitFrame(did, "social.coves.community.profile", "self", rev, "update", rec)
}

func (h *harness) setCommunityOrigin(did, origin, url, software string) {
	h.t.Helper()
	h.exec(`UPDATE communities SET origin = $2, origin_url = $3, origin_software = $4 WHERE did = $1`, did, origin, url, software)
}

// communityRow reads what the views do not show: pds_url and hosted_by_did.
func (h *harness) communityRow(did string) (pds, hostedBy string) {
	h.t.Helper()
	if err := h.pool.QueryRow(h.ctx, `SELECT pds_url, hosted_by_did FROM communities WHERE did = $1`, did).Scan(&pds, &hostedBy); err != nil {
		h.t.Fatalf("community %s: %v", did, err)
	}
	return pds, hostedBy
}

func TestCommunityOriginRule(t *testing.T) {
	t.Parallel()
	h := setup(t)
	const nativePDS = "https://pds.coves.test"
	native, moved, sneaky, unverified := plcDID("native"), plcDID("moved"), plcDID("sneaky"), plcDID("unverified")
	h.addCommunity(native, "c-nba.dev.coves.test", nativePDS)
	h.net.Claim(native, "c-nba.dev.coves.test", nativePDS)
	h.addCommunity(moved, "news.lemmy.world.ap.bridge.test", bridgePDS)
	h.setCommunityOrigin(moved, "lemmy.world", "https://lemmy.world/c/news", "lemmy")
	h.net.Claim(moved, "news.moved.test", otherPDS)
	h.net.Claim(sneaky, "news.evil.test", bridgePDS)
	h.net.ClaimOneWay(unverified, "news.unverified.ap.bridge.test", bridgePDS)
	foreign := map[string]any{"origin": "lemmy.world", "originUrl": "https://lemmy.world/c/news", "originSoftware": "Lemmy"}

	// Not on the bridge: its handle's own domain (or a parent below it),
	// no username needed.
	h.handle(communityFrame(native, "3laaa", map[string]any{"origin": "Dev.Coves.Test", "originUrl": "https://dev.coves.test/c/nba", "originSoftware": "coves"}))
	if got := originOf(h.actor(native)); got != [4]string{"dev.coves.test", "<NULL>", "https://dev.coves.test/c/nba", "coves"} {
		t.Errorf("native community origin = %q", got)
	}
	// ... and never somebody else's.
	h.handle(communityFrame(native, "3labb", foreign))
	if got := originOf(h.actor(native)); got != [4]string{"", "<NULL>", "", ""} {
		t.Errorf("native community asserting a foreign origin = %q, want cleared", got)
	}

	// Left the bridge: the foreign origin goes and the fresh PDS replaces
	// the stored one.
	h.handle(communityFrame(moved, "3laaa", foreign))
	if got := originOf(h.actor(moved)); got != [4]string{"", "<NULL>", "", ""} {
		t.Errorf("community off the bridge origin = %q, want cleared", got)
	}
	if pds, _ := h.communityRow(moved); pds != otherPDS {
		t.Errorf("community off the bridge pds_url = %q, want the fresh %q", pds, otherPDS)
	}

	// On the bridge's PDS with a handle outside its registrable domain:
	// a new community asserting a foreign origin is dropped.
	h.handle(communityFrame(sneaky, "3laaa", foreign))
	if h.exists(sneaky) {
		t.Error("community with a handle outside the bridge's domain was created")
	}

	// Unverified handle on the bridge: redriven, nothing written.
	h.handle(communityFrame(unverified, "3laaa", foreign))
	if h.exists(unverified) {
		t.Error("community with an unverified handle was created")
	}
	if n, _, code, _ := h.redriveRows(unverified); n != 1 || code != "origin-handle-unverified" {
		t.Errorf("unverified community: %d redrive rows, code %q", n, code)
	}
}

func TestIdentityEventStoresFreshPDS(t *testing.T) {
	t.Parallel()
	h := setup(t)
	left, stays := plcDID("left"), plcDID("stays")
	h.addUser(left, "left.lemmy.world.ap.bridge.test", bridgePDS)
	h.setOrigin(left, "lemmy.world", "left", "https://lemmy.world/u/left", "lemmy")
	h.net.Claim(left, "left.elsewhere.test", otherPDS)
	h.addUser(stays, "stays.lemmy.world.ap.bridge.test", bridgePDS)
	h.net.Claim(stays, "stays.lemmy.world.ap.bridge.test", bridgePDS)

	h.handle(identityFrame(left, 5))
	a := h.actor(left)
	if a.Handle != "left.elsewhere.test" || a.PDSURL != otherPDS || originOf(a) != cleared {
		t.Fatalf("after leaving the bridge: handle %q pds %q origin %q", a.Handle, a.PDSURL, originOf(a))
	}
	// The sweep selects rows by stored PDS: the one that left is gone.
	r := h.reconcile(false, "-trusted-hosts", bridgeHost)
	if r.code != 0 || !strings.Contains(r.stdout, "1 bridged rows") || strings.Contains(r.stdout+r.stderr, left) {
		t.Fatalf("sweep after the move: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestCommunityHostedBy(t *testing.T) {
	t.Parallel()
	h := setup(t)
	const instance, evilInstance = "did:web:bridge.test", "did:web:evil.test"
	h.net.SetDocument(instance, identitytest.Doc(instance, "", ""))
	h.net.SetDocument(evilInstance, identitytest.Doc(evilInstance, "", ""))
	comm, liar, unclaimed, bare := plcDID("comm"), plcDID("liar"), plcDID("unclaimed"), plcDID("bare")
	for did, handle := range map[string]string{
		comm: "news.lemmy.world.ap.bridge.test", liar: "liar.lemmy.world.ap.bridge.test",
		unclaimed: "free.lemmy.world.ap.bridge.test", bare: "bare.lemmy.world.ap.bridge.test",
	} {
		h.addCommunity(did, handle, bridgePDS)
		h.net.Claim(did, handle, bridgePDS)
	}

	// Profiles: a claim in the handle's registrable domain is stored; one
	// naming another domain's instance is dropped, not the event.
	h.handle(communityFrame(comm, "3laaa", map[string]any{"origin": "lemmy.world", "hostedBy": instance}))
	h.handle(communityFrame(liar, "3laaa", map[string]any{"origin": "lemmy.world", "hostedBy": evilInstance}))
	if _, hb := h.communityRow(comm); hb != instance {
		t.Errorf("hosted_by_did = %q, want %q", hb, instance)
	}
	if _, hb := h.communityRow(liar); hb != "" {
		t.Errorf("refused hosted-by stored as %q", hb)
	}
	if got := deref(h.actor(liar).Origin.Origin); got != "lemmy.world" {
		t.Errorf("refused hosted-by dropped the rest of the profile: origin %q", got)
	}

	// A rename inside the instance's registrable domain passes the check.
	h.net.Claim(comm, "news.lemmy.world.ap2.bridge.test", bridgePDS)
	h.handle(identityFrame(comm, 10))
	if got := h.actor(comm).Handle; got != "news.lemmy.world.ap2.bridge.test" {
		t.Fatalf("handle = %q after a rename within the instance's domain", got)
	}
	// A rename out of it is permanent: the old handle stays, nothing is
	// redriven.
	h.net.Claim(comm, "news.evil.test", bridgePDS)
	h.handle(identityFrame(comm, 11))
	if got := h.actor(comm).Handle; got != "news.lemmy.world.ap2.bridge.test" {
		t.Errorf("handle = %q after a rename away from the hosting instance", got)
	}
	if n, _, _, _ := h.redriveRows(comm); n != 0 {
		t.Errorf("hosted-by mismatch was queued for redrive (%d rows)", n)
	}
	// No stored claim: nothing to re-check; the verified handle lands.
	h.net.Claim(unclaimed, "free.other.test", bridgePDS)
	h.handle(identityFrame(unclaimed, 12))
	if got := h.actor(unclaimed).Handle; got != "free.other.test" {
		t.Errorf("unclaimed community handle = %q", got)
	}
	// The community handle rule: a bare registrable domain is refused.
	h.net.Claim(bare, "bare.test", bridgePDS)
	h.handle(identityFrame(bare, 13))
	if got := h.actor(bare).Handle; got != "bare.lemmy.world.ap.bridge.test" {
		t.Errorf("community handle = %q, want a bare domain refused", got)
	}
}

var errFlaky = errors.New("flaky: connection reset")

func TestTransientFailuresRetryInline(t *testing.T) {
	t.Parallel()
	h := setup(t)
	// MarkOf's statement: the first read of every event.
	var fails, seen atomic.Int64
	db := &spyDB{inner: h.pool, fail: func(sql string) error {
		if !strings.Contains(sql, "identity_seq, account_seq FROM users") {
			return nil
		}
		seen.Add(1)
		if fails.Add(-1) >= 0 {
			return errFlaky
		}
		return nil
	}}
	h.app = h.newApp(db)
	alice := plcDID("alice")
	h.addUser(alice, "alice.lemmy.world.ap.bridge.test", bridgePDS)
	h.net.Claim(alice, "alice.lemmy.world.ap.bridge.test", bridgePDS)

	// Two failures: the in-line retries absorb them.
	fails.Store(2)
	h.handle(profileFrame(alice, "3laaa", nil))
	if got := h.actor(alice).DisplayName; got != "Name 3laaa" || seen.Load() != 3 {
		t.Fatalf("display name %q after %d reads; want applied on the third", got, seen.Load())
	}
	if n, _, _, _ := h.redriveRows(alice); n != 0 {
		t.Fatalf("absorbed failure queued for redrive (%d rows)", n)
	}

	// Four failures outlast the three retries: redriven, and the redrive
	// pass retries in-line too, spending one attempt of the larger budget.
	seen.Store(0)
	fails.Store(8)
	h.handle(profileFrame(alice, "3labb", nil))
	if n, attempts, code, _ := h.redriveRows(alice); n != 1 || attempts != 0 || code != identity.ReasonStoreFailed || seen.Load() != 4 {
		t.Fatalf("redrive rows %d attempts %d code %q after %d reads", n, attempts, code, seen.Load())
	}
	h.clock.Add(time.Hour)
	if _, err := h.app.ingester.RedriveOnce(h.ctx, ingest.DirectLanes); err != nil {
		t.Fatal(err)
	}
	if n, attempts, _, dead := h.redriveRows(alice); n != 1 || attempts != 1 || dead {
		t.Fatalf("after a failed redrive: rows %d attempts %d dead %v", n, attempts, dead)
	}
	h.clock.Add(time.Hour)
	if _, err := h.app.ingester.RedriveOnce(h.ctx, ingest.DirectLanes); err != nil {
		t.Fatal(err)
	}
	if n, _, _, _ := h.redriveRows(alice); n != 0 || h.actor(alice).DisplayName != "Name 3labb" {
		t.Fatalf("redrive did not land: rows %d name %q", n, h.actor(alice).DisplayName)
	}
}
