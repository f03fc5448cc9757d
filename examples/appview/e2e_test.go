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
	run := func() (stop func()) {
		c, err := jetstream.New(h.app.store, counting, &jetstream.Config{
			URL: wsURL(srv), Lanes: 3, BackoffMin: time.Millisecond, BackoffMax: 10 * time.Millisecond, FlushInterval: 10 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		return func() {
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("Run = %v", err)
			}
		}
	}
	last := frameTime(t, frames[len(frames)-1])
	storedCursor := func() int64 {
		v, _, err := h.app.store.LoadCursor(h.ctx, jetstream.CursorNameDefault)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	stop := run()
	waitUntil(t, "stored cursor at the last frame", func() bool { return storedCursor() == last })
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
	stop = run()
	waitUntil(t, "the new frame", func() bool { return storedCursor() == frameTime(t, next) })
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
