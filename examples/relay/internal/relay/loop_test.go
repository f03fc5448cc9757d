package relay

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/sig"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} } // signers sign with the real time

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestRelayedOnceWithinWindow: one activity id is relayed once within the
// seen-set's window, whoever sends it again (a replay, another relay's
// reflection); after the window it is an activity like any other.
func TestRelayedOnceWithinWindow(t *testing.T) {
	clk := newClock()
	f := newFixture(t, func(c *Config) { c.Now = clk.Now; c.SeenWindow = time.Minute })
	f.subscribe("a", Public)
	f.subscribe("b", Public)
	for i, want := range []int{1, 0, 0} {
		if w := f.create("a", "1"); w.Code != http.StatusAccepted {
			t.Fatalf("Create %d = %d", i, w.Code)
		}
		if got := len(f.send.take()); got != want {
			t.Fatalf("Create %d: %d sends; want %d", i, got, want)
		}
	}
	clk.advance(2 * time.Minute)
	f.create("a", "1")
	if got := len(f.send.take()); got != 1 {
		t.Fatalf("after the window: %d sends; want 1", got)
	}
}

// TestQueueFailureForgetsTheID: an activity the relay could not queue is
// answered 503 and not remembered, so the sender's retry is relayed.
func TestQueueFailureForgetsTheID(t *testing.T) {
	fs := &failingSender{fail: true}
	f := newFixture(t, func(c *Config) { c.Sender = fs })
	f.subscribe("a", Public)
	f.subscribe("b", Public)
	if w := f.create("a", "1"); w.Code != http.StatusServiceUnavailable {
		t.Fatalf("Create with the queue down = %d; want 503", w.Code)
	}
	fs.fail = false
	if w := f.create("a", "1"); w.Code != http.StatusAccepted || fs.relayed != 1 {
		t.Fatalf("retry = %d, %d relayed; want 202 and relayed once", w.Code, fs.relayed)
	}
}

// TestAnnounceOfRelayedObjectNotRelayed: a LitePub relay that wraps what it
// received from this relay in an Announce of its own sends the same object
// back under a new id; it is not relayed again, nor is an Announce of one of
// the relay's own activities.
func TestAnnounceOfRelayedObjectNotRelayed(t *testing.T) {
	f := newFixture(t, nil)
	f.subscribe("a", Public)
	f.subscribe("b", Public)
	rel, signer := f.addActor("c", "/relay")
	if w := f.post(signer, map[string]any{"id": "https://c.example/activities/f1", "type": "Follow", "actor": rel, "object": base + "/actor"}); w.Code != http.StatusAccepted {
		t.Fatalf("LitePub Follow = %d", w.Code)
	}
	f.send.take()
	f.create("a", "1")
	sends := f.send.take()
	if len(sends) != 2 {
		t.Fatalf("%d sends; want forward and Announce", len(sends))
	}
	for _, obj := range []string{"https://a.example/notes/1", announceIDOf(sends[1].Body)} {
		w := f.post(signer, map[string]any{"id": "https://c.example/activities/wrap-" + obj[len(obj)-4:], "type": "Announce", "actor": rel,
			"to": []string{rel + "/followers"}, "object": obj})
		if w.Code != http.StatusAccepted {
			t.Fatalf("Announce of %s = %d", obj, w.Code)
		}
		if s := f.send.take(); len(s) != 0 {
			t.Fatalf("the Announce of %s was relayed: %d sends", obj, len(s))
		}
	}
	// An Announce of anything else still is.
	f.post(signer, map[string]any{"id": "https://c.example/activities/a9", "type": "Announce", "actor": rel,
		"to": []string{rel + "/followers"}, "object": "https://c.example/objects/9"})
	if s := f.send.take(); len(s) != 1 {
		t.Fatalf("%d sends for a new object; want 1", len(s))
	}
}

// TestNeverBackToItsServer: nothing is delivered to the server an activity
// came from, however its host is spelled, nor an Announced object to the
// server it is on.
func TestNeverBackToItsServer(t *testing.T) {
	f := newFixture(t, nil)
	f.subscribe("a", Public)
	f.subscribe("b", Public)
	rel, signer := f.addActor("c", "/relay")
	f.post(signer, map[string]any{"id": "https://c.example/activities/f1", "type": "Follow", "actor": rel, "object": base + "/actor"})
	f.send.take()

	// a.example's author, with the host in capitals.
	upper := "https://A.EXAMPLE/users/alice"
	f.look.set(upper, map[string]any{"id": upper, "type": "Person", "inbox": upper + "/inbox",
		"publicKey": map[string]any{"id": upper + "#main-key", "owner": upper, "publicKeyPem": pemOf(t, f, "a")}})
	us := signerOf(t, f, upper)
	if w := f.post(us, map[string]any{"id": upper + "/statuses/1/activity", "type": "Create", "actor": upper, "to": []string{Public},
		"object": map[string]any{"id": upper + "/statuses/1", "type": "Note"}}); w.Code != http.StatusAccepted {
		t.Fatalf("Create = %d %s", w.Code, w.Body)
	}
	if n := inboxHosts(f.send.take())["a.example"]; n != 0 {
		t.Errorf("delivered %d times back to a.example", n)
	}

	// c's relay actor announces a.example's post: a.example has it already.
	f.post(signer, map[string]any{"id": "https://c.example/activities/a2", "type": "Announce", "actor": rel,
		"to": []string{rel + "/followers"}, "object": "https://a.example/notes/77"})
	hosts := inboxHosts(f.send.take())
	if hosts["a.example"] != 0 || hosts["c.example"] != 0 || hosts["b.example"] != 1 {
		t.Errorf("deliveries by host %v; want b.example only", hosts)
	}
}

func pemOf(t *testing.T, f *fixture, name string) string {
	t.Helper()
	b, err := sig.MarshalPublicKeyPEM(f.peers[name].key.Public())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// failingSender fails every SendBatch while fail is set, and counts the
// relayed batches it took.
type failingSender struct {
	mu      sync.Mutex
	fail    bool
	relayed int
}

func (s *failingSender) SendBatch(_ context.Context, _ string, _ []byte, _ []string, b deliver.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail && b.Tag == TagRelay {
		return errors.New("queue down")
	}
	if b.Tag == TagRelay {
		s.relayed++
	}
	return nil
}

// TestMemorySeenBounds: the in-memory seen-set forgets by age and by count.
func TestMemorySeenBounds(t *testing.T) {
	clk := newClock()
	s := NewMemorySeen(&MemorySeenConfig{MaxEntries: 3, Now: clk.Now})
	ctx := context.Background()
	mark := func(k string) bool {
		t.Helper()
		ok, err := s.Mark(ctx, k, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !mark("a") || mark("a") {
		t.Fatal("a second Mark within the window reported new")
	}
	mark("b")
	mark("c")
	mark("d") // over MaxEntries: the oldest, a, is forgotten
	if !mark("a") {
		t.Error("a still remembered beyond MaxEntries")
	}
	if s.Len() > 3 {
		t.Errorf("Len = %d; want at most 3", s.Len())
	}
	clk.advance(2 * time.Minute)
	if !mark("d") {
		t.Error("d still remembered after the window")
	}
	if err := s.Forget(ctx, "d"); err != nil || !mark("d") {
		t.Errorf("Forget: %v; Mark after Forget must be new", err)
	}
	if has, _ := s.Has(ctx, "zzz"); has {
		t.Error("Has of an unmarked key")
	}
	if has, _ := s.Has(ctx, "d"); !has {
		t.Error("Has of a marked key")
	}
}
