package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/identity"
)

type reconcileRun struct {
	code           int
	stdout, stderr string
}

func (h *harness) reconcile(terminal bool, args ...string) reconcileRun {
	h.t.Helper()
	return h.reconcileEnv(terminal, nil, args...)
}

// reconcileEnv runs reconcile-handles with extra environment variables.
func (h *harness) reconcileEnv(terminal bool, extra map[string]string, args ...string) reconcileRun {
	h.t.Helper()
	var out, errb bytes.Buffer
	vars := map[string]string{"DATABASE_URL": h.connStr, "PLC_URL": "https://plc.test"}
	for k, v := range extra {
		vars[k] = v
	}
	code := runEnv(context.Background(), append([]string{"reconcile-handles"}, args...), env{
		stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] },
		resolver: h.res, isTerminal: terminal,
	})
	return reconcileRun{code, out.String(), errb.String()}
}

func TestReconcileHandles(t *testing.T) {
	t.Parallel()
	h := setup(t)
	drifted, fine, foreign, comm := plcDID("drift"), plcDID("fine"), plcDID("foreign"), plcDID("comm")
	// Missed its identity event: stored handle is the old scheme.
	h.addUser(drifted, "drift.lemmy-world.bridge.test", bridgePDS)
	h.net.Claim(drifted, "drift.lemmy.world.ap.bridge.test", bridgePDS)
	h.addUser(fine, "fine.lemmy.world.ap.bridge.test", bridgePDS)
	h.net.Claim(fine, "fine.lemmy.world.ap.bridge.test", bridgePDS)
	h.addCommunity(comm, "news.lemmy-world.bridge.test", bridgePDS)
	h.net.Claim(comm, "news.lemmy.world.ap.bridge.test", bridgePDS)
	// Not on a trusted host: never selected, even though it drifted and
	// its handle looks bridged (the sweep selects by PDS, not by shape).
	h.addUser(foreign, "foreign.lemmy-world.bridge.test", otherPDS)
	h.net.Claim(foreign, "foreign.lemmy.world.ap.bridge.test", otherPDS)

	// A cached identity (of a row the sweep does not select) shows whether
	// identity_cache was emptied.
	if _, err := h.app.cache.LookupDID(h.ctx, identity.DID(foreign)); err != nil {
		t.Fatal(err)
	}
	cached := func() bool {
		_, err := h.app.cacheStore.Get(h.ctx, identity.DID(foreign))
		if err != nil && !errors.Is(err, identity.ErrCacheMiss) {
			t.Fatal(err)
		}
		return err == nil
	}

	// Contradictory flags are refused before anything runs.
	if r := h.reconcile(false, "-trusted-hosts", bridgeHost, "-dry-run", "-clear-identity-cache"); r.code != exitUsage {
		t.Fatalf("-dry-run -clear-identity-cache exit %d, want %d", r.code, exitUsage)
	}

	// Dry run: reports, changes nothing, exits non-zero.
	r := h.reconcile(false, "-trusted-hosts", bridgeHost, "-dry-run")
	if r.code != exitMismatch {
		t.Fatalf("dry run exit %d, want %d\n%s%s", r.code, exitMismatch, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "would-update") || !strings.Contains(r.stdout, "3 bridged rows") {
		t.Errorf("dry-run summary:\n%s", r.stdout)
	}
	if strings.Contains(r.stderr, "\r") || !strings.Contains(r.stderr, string(drifted)) {
		t.Errorf("non-terminal progress should be plain lines:\n%q", r.stderr)
	}
	if got := h.actor(drifted).Handle; got != "drift.lemmy-world.bridge.test" {
		t.Fatalf("dry run changed the handle to %q", got)
	}
	if got := h.actor(comm).Handle; got != "news.lemmy-world.bridge.test" {
		t.Fatalf("dry run changed the community handle to %q", got)
	}
	if !cached() {
		t.Fatal("dry run emptied identity_cache")
	}

	// A real run (with the cache cleared first) fixes the drift; exit 0.
	r = h.reconcile(true, "-trusted-hosts", bridgeHost, "-clear-identity-cache", "-concurrency", "2")
	if r.code != exitOK {
		t.Fatalf("run exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "\r") {
		t.Errorf("terminal progress should be a live line:\n%q", r.stderr)
	}
	if !strings.Contains(r.stdout, "updated") || !strings.Contains(r.stdout, "every bridged row matches") {
		t.Errorf("summary:\n%s", r.stdout)
	}
	if got := h.actor(drifted).Handle; got != "drift.lemmy.world.ap.bridge.test" {
		t.Errorf("drifted handle = %q after the run", got)
	}
	if got := h.actor(comm).Handle; got != "news.lemmy.world.ap.bridge.test" {
		t.Errorf("community handle = %q after the run", got)
	}
	if got := h.actor(foreign).Handle; got != "foreign.lemmy-world.bridge.test" {
		t.Errorf("row off the trusted hosts was touched: %q", got)
	}
	if cached() {
		t.Error("-clear-identity-cache left identity_cache rows")
	}

	// Re-running is clean.
	if r := h.reconcile(false, "-trusted-hosts", bridgeHost, "-dry-run"); r.code != exitOK {
		t.Fatalf("dry run after the fix exit %d\n%s", r.code, r.stdout)
	}

	// A row that cannot be resolved is an error, not a match.
	h.net.FailPLC(fine, 500)
	r = h.reconcile(false, "-trusted-hosts", bridgeHost, "-json")
	if r.code != exitRowErrors {
		t.Fatalf("exit %d with an unresolvable row, want %d\n%s", r.code, exitRowErrors, r.stdout)
	}
	if !strings.Contains(r.stdout, `"resolve-failed": 1`) || !strings.Contains(r.stdout, `"allMatched": false`) {
		t.Errorf("json report:\n%s", r.stdout)
	}
}

func TestReconcileClearsOriginOffTheBridge(t *testing.T) {
	t.Parallel()
	h := setup(t)
	moved := plcDID("moved")
	h.addUser(moved, "moved.lemmy.world.ap.bridge.test", bridgePDS)
	h.setOrigin(moved, "lemmy.world", "Moved", "https://lemmy.world/u/Moved", "lemmy")
	// Its repository left the bridge; no event ever told us.
	h.net.Claim(moved, "moved.lemmy.world.ap.bridge.test", otherPDS)
	// A dry run reports and clears nothing.
	if r := h.reconcile(false, "-trusted-hosts", bridgeHost, "-dry-run"); originOf(h.actor(moved))[0] != "lemmy.world" {
		t.Fatalf("dry run cleared the origin (exit %d)\n%s", r.code, r.stdout)
	}
	r := h.reconcile(false, "-trusted-hosts", bridgeHost)
	if !strings.Contains(r.stdout, "origin fields cleared: 1 rows (0 off-list)") {
		t.Errorf("summary:\n%s", r.stdout)
	}
	if got := originOf(h.actor(moved)); got != cleared {
		t.Fatalf("origin = %q, want cleared", got)
	}
}

// TestReconcileRemovedHost: spec 5.2 clears origin fields "when a host is
// removed from the trusted list, when the sweep runs". Such rows keep
// their stored PDS on the removed host, so ListBridged never gives them:
// only the store's OriginLister brings them to the sweep.
func TestReconcileRemovedHost(t *testing.T) {
	t.Parallel()
	h := setup(t)
	const newHost, newPDS = "pds.newbridge.test", "https://pds.newbridge.test"
	removed, plain, kept := plcDID("removed"), plcDID("plain"), plcDID("kept")
	// The removed bridge still serves the repository and the handle
	// verifies: only the trusted list changed.
	h.addUser(removed, "alice.lemmy.world.ap.bridge.test", bridgePDS)
	h.setOrigin(removed, "lemmy.world", "Alice", "https://lemmy.world/u/Alice", "lemmy")
	h.net.Claim(removed, "alice.lemmy.world.ap.bridge.test", bridgePDS)
	// No origin fields on the removed host: nothing to clear, not visited.
	h.addUser(plain, "plain.lemmy.world.ap.bridge.test", bridgePDS)
	h.net.Claim(plain, "plain.lemmy.world.ap.bridge.test", bridgePDS)
	// On the host still trusted: keeps its fields.
	h.addUser(kept, "bob.lemmy.world.ap.newbridge.test", newPDS)
	h.setOrigin(kept, "lemmy.world", "Bob", "https://lemmy.world/u/Bob", "lemmy")
	h.net.Claim(kept, "bob.lemmy.world.ap.newbridge.test", newPDS)
	env := map[string]string{"TRUSTED_BRIDGE_PDS_HOSTS": newHost}
	want := [4]string{"lemmy.world", "Alice", "https://lemmy.world/u/Alice", "lemmy"}

	r := h.reconcileEnv(false, env, "-dry-run")
	if got := originOf(h.actor(removed)); got != want {
		t.Fatalf("dry run cleared the origin: %q (exit %d)\n%s%s", got, r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, removed+" user stored=alice.lemmy.world.ap.bridge.test verified=alice.lemmy.world.ap.bridge.test reason=matched off-list\n") {
		t.Errorf("dry run did not visit the row on the removed host as off-list:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout, "dry run: 1 bridged rows, 1 off-list rows") || !strings.Contains(r.stdout, "origin fields cleared: none (dry run)") {
		t.Errorf("dry-run summary:\n%s", r.stdout)
	}
	r = h.reconcileEnv(false, env, "-dry-run", "-json")
	var rep struct {
		OffList, OriginCleared int
		Rows                   []struct {
			DID     string
			OffList bool
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, r.stdout)
	}
	for _, row := range rep.Rows {
		if row.OffList != (row.DID == removed) {
			t.Errorf("json row %s offList %v", row.DID, row.OffList)
		}
	}
	if rep.OffList != 1 || rep.OriginCleared != 0 || len(rep.Rows) != 2 {
		t.Errorf("json report: offList %d originCleared %d rows %d\n%s", rep.OffList, rep.OriginCleared, len(rep.Rows), r.stdout)
	}

	r = h.reconcileEnv(false, env)
	if r.code != exitOK {
		t.Errorf("run exit %d, want %d\n%s%s", r.code, exitOK, r.stdout, r.stderr)
	}
	if got := originOf(h.actor(removed)); got != cleared {
		t.Errorf("origin on the removed host = %q, want cleared\n%s%s", got, r.stdout, r.stderr)
	}
	if got := originOf(h.actor(kept)); got != [4]string{"lemmy.world", "Bob", "https://lemmy.world/u/Bob", "lemmy"} {
		t.Errorf("origin on the trusted host = %q, want kept", got)
	}
	if !strings.Contains(r.stdout, "origin fields cleared: 1 rows (1 off-list)") {
		t.Errorf("summary:\n%s", r.stdout)
	}
	if strings.Contains(r.stderr, plain) {
		t.Errorf("a row without origin fields off the trusted list was visited:\n%s", r.stderr)
	}
	if a := h.actor(plain); a.Handle != "plain.lemmy.world.ap.bridge.test" || a.PDSURL != bridgePDS {
		t.Errorf("row without origin fields changed: handle %q pds %q", a.Handle, a.PDSURL)
	}
}

// TestReconcileRemovedHostCommunities: a community off the bridge keeps
// only an origin the spec 4.4 own-domain rule allows its verified handle.
// The store supplies Subject.Origin for that; without it, a community
// whose stored PDS is no longer trusted keeps a foreign origin.
func TestReconcileRemovedHostCommunities(t *testing.T) {
	t.Parallel()
	h := setup(t)
	const nativePDS = "https://pds.coves.test"
	foreign, native := plcDID("foreign"), plcDID("native")
	h.addCommunity(foreign, "news.lemmy.world.ap.bridge.test", bridgePDS)
	h.setCommunityOrigin(foreign, "lemmy.world", "https://lemmy.world/c/news", "lemmy")
	h.net.Claim(foreign, "news.lemmy.world.ap.bridge.test", bridgePDS)
	h.addCommunity(native, "c-nba.dev.coves.test", nativePDS)
	h.setCommunityOrigin(native, "dev.coves.test", "https://dev.coves.test/c/nba", "coves")
	h.net.Claim(native, "c-nba.dev.coves.test", nativePDS)
	env := map[string]string{"TRUSTED_BRIDGE_PDS_HOSTS": "pds.newbridge.test"}

	if r := h.reconcileEnv(false, env, "-dry-run"); originOf(h.actor(foreign))[0] != "lemmy.world" {
		t.Fatalf("dry run cleared the origin (exit %d)\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := h.reconcileEnv(false, env)
	if r.code != exitOK {
		t.Errorf("run exit %d, want %d\n%s%s", r.code, exitOK, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "run: 0 bridged rows, 2 off-list rows") || !strings.Contains(r.stdout, "origin fields cleared: 1 rows (1 off-list)") {
		t.Errorf("summary:\n%s", r.stdout)
	}
	if got := originOf(h.actor(foreign)); got != [4]string{"", "<NULL>", "", ""} {
		t.Errorf("foreign origin on the removed host = %q, want cleared\n%s%s", got, r.stdout, r.stderr)
	}
	if got := originOf(h.actor(native)); got != [4]string{"dev.coves.test", "<NULL>", "https://dev.coves.test/c/nba", "coves"} {
		t.Errorf("native community's own-domain origin = %q, want kept", got)
	}
}

// TestReconcileRemovedHostShutDown: a removed bridge that was shut down
// answers no well-known, so the row's handle no longer verifies. Its
// origin fields are still cleared (the fresh document names a PDS off the
// list); the row could not be checked, so the run exits 2; once cleared it
// holds no origin fields, is not visited again, and the next run exits 0.
func TestReconcileRemovedHostShutDown(t *testing.T) {
	t.Parallel()
	h := setup(t)
	gone := plcDID("gone")
	h.addUser(gone, "gone.lemmy.world.ap.bridge.test", bridgePDS)
	h.setOrigin(gone, "lemmy.world", "Gone", "https://lemmy.world/u/Gone", "lemmy")
	h.net.ClaimOneWay(gone, "gone.lemmy.world.ap.bridge.test", bridgePDS)
	env := map[string]string{"TRUSTED_BRIDGE_PDS_HOSTS": "pds.newbridge.test"}

	r := h.reconcileEnv(false, env)
	if r.code != exitRowErrors || !strings.Contains(r.stdout, identity.ReasonUnverified) {
		t.Errorf("run exit %d, want %d with %s\n%s%s", r.code, exitRowErrors, identity.ReasonUnverified, r.stdout, r.stderr)
	}
	if got := originOf(h.actor(gone)); got != cleared {
		t.Errorf("origin = %q, want cleared\n%s", got, r.stdout)
	}
	if !strings.Contains(r.stdout, "origin fields cleared: 1 rows (1 off-list)") {
		t.Errorf("summary:\n%s", r.stdout)
	}
	r = h.reconcileEnv(false, env)
	if r.code != exitOK || strings.Contains(r.stderr, gone) {
		t.Errorf("second run exit %d, want %d without visiting the cleared row\n%s%s", r.code, exitOK, r.stdout, r.stderr)
	}
}

func TestReconcileUsage(t *testing.T) {
	t.Parallel()
	h := setup(t)
	for _, args := range [][]string{
		{}, // no trusted hosts
		{"-trusted-hosts", bridgeHost, "-concurrency", "0"},
		{"-trusted-hosts", "https://user@pds.bridge.test"},
		{"-no-such-flag"},
	} {
		if r := h.reconcile(false, args...); r.code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, r.code, exitUsage)
		}
	}
}
