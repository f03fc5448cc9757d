package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/examples/appview/internal/jetstream"
	"github.com/fedkit/fedkit/examples/appview/internal/store"
)

func wsURL(s *httptest.Server) string {
	return "ws" + strings.TrimPrefix(s.URL, "http") + "/subscribe"
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func frameTime(t *testing.T, b []byte) int64 {
	t.Helper()
	f, err := jetstream.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return f.TimeUS
}

// runConsumer runs a Jetstream consumer on url into handle (nil: the app's
// ingester), with the Postgres cursor read and written outside the
// harness's statement counter. stop cancels it and checks it ended cleanly.
func (h *harness) runConsumer(url string, handle jetstream.Handler) (stop func()) {
	h.t.Helper()
	if handle == nil {
		handle = h.app.ingester.Handle
	}
	c, err := jetstream.New(store.New(h.pool), handle, &jetstream.Config{
		URL: url, Lanes: 3, BackoffMin: time.Millisecond, BackoffMax: 10 * time.Millisecond, FlushInterval: 10 * time.Millisecond,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			h.t.Errorf("Run = %v", err)
		}
	}
}

// storedCursor is the cursor in Postgres.
func (h *harness) storedCursor() int64 {
	h.t.Helper()
	v, _, err := store.New(h.pool).LoadCursor(h.ctx, jetstream.CursorNameDefault)
	if err != nil {
		h.t.Fatal(err)
	}
	return v
}

// TestConsumerResumesAfterDisconnect runs the real ingester behind the
// Jetstream consumer with the Postgres cursor, against a fake Jetstream
// that drops the first connection mid-stream.
func TestConsumerResumesAfterDisconnect(t *testing.T) {
	t.Parallel()
	h := setup(t)
	alice, bob, stranger := plcDID("alice"), plcDID("bob"), plcDID("stranger")
	h.addUser(alice, "alice.old.bridge.test", bridgePDS)
	h.net.Claim(alice, "alice.lemmy.world.ap.bridge.test", bridgePDS)
	h.net.Claim(bob, "bob.mastodon.social.ap.bridge.test", bridgePDS)

	frames := [][]byte{
		identityFrame(stranger, 1),
		identityFrame(alice, 2),
		profileFrame(bob, "3laaa", bridgedFields("Bob", "mastodon.social")),
		commitFrame(bob, "app.bsky.feed.post", "3lp1", "3lab1", "create", map[string]any{"text": "first", "createdAt": "2026-11-29T12:00:00Z"}),
		identityFrame(stranger, 3),
		commitFrame(bob, "app.bsky.feed.post", "3lp2", "3lab2", "create", map[string]any{"text": "second", "createdAt": "2026-11-29T12:01:00Z"}),
	}
	fake := jetstream.NewFakeServer()
	fake.Append(frames...)
	fake.DropAfter(3) // the first connection dies after the profile frame
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)

	var mu sync.Mutex
	handled := map[int64]int{}
	counting := func(ctx context.Context, f jetstream.Frame) error {
		err := h.app.ingester.Handle(ctx, f)
		if err == nil {
			mu.Lock()
			handled[f.TimeUS]++
			mu.Unlock()
		}
		return err
	}
	last := frameTime(t, frames[len(frames)-1])
	stop := h.runConsumer(wsURL(srv), counting)
	waitUntil(t, "stored cursor at the last frame", func() bool { return h.storedCursor() == last })
	stop()

	for _, f := range frames {
		if n := handled[frameTime(t, f)]; n != 1 {
			t.Errorf("frame %d handled %d times, want exactly once", frameTime(t, f), n)
		}
	}
	dials := fake.Dials()
	if len(dials) != 2 || dials[1] != frameTime(t, frames[2]) {
		t.Errorf("dial cursors = %v, want a redial at %d", dials, frameTime(t, frames[2]))
	}
	if got := h.actor(alice).Handle; got != "alice.lemmy.world.ap.bridge.test" {
		t.Errorf("alice handle = %q", got)
	}
	if got := originOf(h.actor(bob)); got[1] != "Bob" {
		t.Errorf("bob origin = %q", got)
	}
	posts, err := h.app.store.PostsByAuthor(h.ctx, bob, time.Time{}, "", 10)
	if err != nil || len(posts) != 2 {
		t.Fatalf("posts = %v, %v", posts, err)
	}

	// A restart resumes from the stored cursor: nothing is handled twice.
	next := identityFrame(alice, 4)
	fake.Append(next)
	stop = h.runConsumer(wsURL(srv), counting)
	waitUntil(t, "the new frame", func() bool { return h.storedCursor() == frameTime(t, next) })
	stop()
	if d := fake.Dials(); d[len(d)-1] != last {
		t.Errorf("restart dialled with cursor %d, want %d", d[len(d)-1], last)
	}
	for tu, n := range handled {
		if n != 1 {
			t.Errorf("frame %d handled %d times after restart", tu, n)
		}
	}
}

// TestJetstreamScenarios runs the event scenarios through the
// WebSocket path: the fake Jetstream, the consumer and its Postgres
// cursor, the ingester, and the identity harness's fake PLC and
// well-known servers.
func TestJetstreamScenarios(t *testing.T) {
	t.Parallel()
	h := setup(t)
	alice, comm, mover, outside, untrusted, stranger := plcDID("alice"), plcDID("comm"), plcDID("mover"),
		plcDID("outside"), plcDID("untrusted"), plcDID("stranger")
	// Renamed by the bridge; the stored rows still hold the old handles.
	h.addUser(alice, "alice.lemmy-world.bridge.test", bridgePDS)
	h.net.Claim(alice, "alice.lemmy.world.ap.bridge.test", bridgePDS)
	h.addCommunity(comm, "news.lemmy-world.bridge.test", bridgePDS)
	h.net.Claim(comm, "news.lemmy.world.ap.bridge.test", bridgePDS)
	// Left the bridge.
	h.addUser(mover, "mover.lemmy.world.ap.bridge.test", bridgePDS)
	h.setOrigin(mover, "lemmy.world", "Mover", "https://lemmy.world/u/Mover", "lemmy")
	h.net.Claim(mover, "mover.elsewhere.test", otherPDS)
	// On the bridge's PDS with a handle outside its registrable domain.
	h.addUser(outside, "outside.lemmy.world.ap.bridge.test", bridgePDS)
	h.setOrigin(outside, "lemmy.world", "Outside", "https://lemmy.world/u/Outside", "lemmy")
	h.net.Claim(outside, "outside.evil.test", bridgePDS)
	// Asserts origin fields from an untrusted PDS.
	h.net.Claim(untrusted, "untrusted.elsewhere.test", otherPDS)
	h.net.Claim(stranger, "stranger.elsewhere.test", otherPDS)

	fake := jetstream.NewFakeServer()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	stop := h.runConsumer(wsURL(srv), nil)
	defer stop()
	// send appends frames and waits until the stored cursor passes them all.
	send := func(frames ...[]byte) {
		t.Helper()
		fake.Append(frames...)
		last := frameTime(t, frames[len(frames)-1])
		waitUntil(t, "the stored cursor", func() bool { return h.storedCursor() >= last })
	}

	send(identityFrame(alice, 10), identityFrame(comm, 11), identityFrame(mover, 12),
		profileFrame(outside, "3laaa", bridgedFields("Outside", "lemmy.world")),
		profileFrame(untrusted, "3laaa", bridgedFields("Untrusted", "lemmy.world")))
	if got := h.actor(alice).Handle; got != "alice.lemmy.world.ap.bridge.test" {
		t.Errorf("renamed user handle = %q", got)
	}
	if got := h.actor(comm).Handle; got != "news.lemmy.world.ap.bridge.test" {
		t.Errorf("renamed community handle = %q", got)
	}
	if got := originOf(h.actor(mover)); got != cleared {
		t.Errorf("DID that left the bridge: origin %q, want cleared", got)
	}
	if got := originOf(h.actor(outside)); got != cleared {
		t.Errorf("handle outside the PDS's registrable domain: origin %q, want cleared", got)
	}
	if h.exists(untrusted) {
		t.Error("profile from an untrusted PDS was admitted")
	}

	// An unknown DID's identity event: one indexed read, no resolution.
	queries, hits := h.db.n.Load(), h.net.TotalHits()
	send(identityFrame(stranger, 13))
	if q := h.db.n.Load() - queries; q != 1 {
		t.Errorf("unknown DID cost %d queries, want 1", q)
	}
	if h.net.TotalHits() != hits {
		t.Errorf("unknown DID was resolved (%d requests)", h.net.TotalHits()-hits)
	}

	// A stale event (older seq) behind a source that still serves the old
	// handle cannot revert the rename.
	h.net.Claim(alice, "alice.lemmy-world.bridge.test", bridgePDS)
	send(identityFrame(alice, 9))
	if got := h.actor(alice).Handle; got != "alice.lemmy.world.ap.bridge.test" {
		t.Errorf("stale event reverted the handle to %q", got)
	}
}

// TestServe runs the serve command end to end: environment config, the
// consumer, and the XRPC views.
func TestServe(t *testing.T) {
	t.Parallel()
	h := setup(t)
	alice := plcDID("alice")
	h.net.Claim(alice, "alice.lemmy.world.ap.bridge.test", bridgePDS)
	fake := jetstream.NewFakeServer()
	fake.Append(profileFrame(alice, "3laaa", bridgedFields("Alice", "lemmy.world")))
	js := httptest.NewServer(fake)
	t.Cleanup(js.Close)

	env := map[string]string{
		"DATABASE_URL":             h.connStr,
		"JETSTREAM_URL":            wsURL(js),
		"TRUSTED_BRIDGE_PDS_HOSTS": bridgeHost,
		"PLC_URL":                  "https://plc.test",
		"LISTEN":                   "127.0.0.1:0",
	}
	addr := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- runEnv(ctx, []string{"serve"}, envFor(env, h, func(a string) { addr <- a }))
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case code := <-done:
		t.Fatalf("serve exited %d", code)
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not start")
	}
	var view map[string]any
	waitUntil(t, "the profile", func() bool {
		resp, err := http.Get(base + "/xrpc/dev.fedkit.appview.actor.getProfile?actor=" + url.QueryEscape("@alice@lemmy.world"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return false
		}
		return json.Unmarshal(b, &view) == nil
	})
	if view["did"] != alice || view["originUsername"] != "Alice" || view["originSoftware"] != "lemmy" {
		t.Errorf("view = %v", view)
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("serve exit = %d", code)
	}
}

func envFor(vars map[string]string, h *harness, ready func(string)) env {
	return env{
		stdout: io.Discard, stderr: testWriter{h.t},
		getenv:   func(k string) string { return vars[k] },
		resolver: h.res,
		ready:    ready,
	}
}

// testWriter sends command output to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
