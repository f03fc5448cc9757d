package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/fetch"
)

type running struct {
	*server
	host  string // 127.0.0.1:port
	base  string
	notes chan string
}

// start runs one server on a loopback port, with a client allowed to reach
// loopback (tests only) and WebFinger over http.
func start(t *testing.T, user string) *running {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(&client.Config{AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	srv := httptest.NewUnstartedServer(nil)
	host := srv.Listener.Addr().(*net.TCPAddr).String()
	s, h, err := newServer("http", host, user, key, c, &fetch.Config{PlainHTTPWebFinger: true})
	if err != nil {
		t.Fatal(err)
	}
	notes := make(chan string, 10)
	s.onNote = func(_, text string) { notes <- text }
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.out.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return &running{server: s, host: host, base: "http://" + host, notes: notes}
}

func (r *running) follows(actor string) bool {
	return r.followers.Has(actor)
}

// note waits for a Note.
func (r *running) note(t *testing.T) string {
	t.Helper()
	select {
	case n := <-r.notes:
		return n
	case <-time.After(15 * time.Second):
		t.Fatal("timed out waiting for a Note")
		return ""
	}
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// Two servers on loopback look each other up by handle, follow each other
// and exchange a Create(Note), each delivery signed, verified and tied to
// its actor by the library's pieces only.
func TestTwoServersFollowAndExchangeNotes(t *testing.T) {
	alice, bob := start(t, "alice"), start(t, "bob")
	ctx := context.Background()
	if err := alice.follow(ctx, "bob@"+bob.host); err != nil {
		t.Fatalf("alice follows bob: %v", err)
	}
	if err := bob.follow(ctx, "@alice@"+alice.host); err != nil {
		t.Fatalf("bob follows alice: %v", err)
	}
	eventually(t, "the Follows", func() bool { return alice.follows(bob.actor.ID) && bob.follows(alice.actor.ID) })
	if err := alice.post(ctx, "hello from alice"); err != nil {
		t.Fatal(err)
	}
	if err := bob.post(ctx, "hello from bob"); err != nil {
		t.Fatal(err)
	}
	if n := bob.note(t); n != "hello from alice" {
		t.Errorf("bob got %q", n)
	}
	if n := alice.note(t); n != "hello from bob" {
		t.Errorf("alice got %q", n)
	}
}

// What nobody signed, or someone signed for another actor, is refused.
func TestUnverifiedActivitiesRefused(t *testing.T) {
	alice := start(t, "alice")
	body := `{"type":"Create","actor":"http://` + alice.host + `/users/mallory","object":{"type":"Note","content":"forged"}}`
	resp, err := http.Post(alice.base+"/users/alice/inbox", "application/activity+json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unsigned Create: %d; want 401", resp.StatusCode)
	}
	select {
	case n := <-alice.notes:
		t.Fatalf("recorded %q", n)
	default:
	}
}
