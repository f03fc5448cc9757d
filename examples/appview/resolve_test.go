package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/fedkit/fedkit/examples/appview/internal/store"
	"github.com/fedkit/fedkit/examples/appview/internal/xrpc"
)

func get(t *testing.T, base, method, actor string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(base + "/xrpc/" + method + "?actor=" + url.QueryEscape(actor))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("body: %v", err)
	}
	return resp.StatusCode, body
}

func TestResolveActor(t *testing.T) {
	t.Parallel()
	h := setup(t)
	alice, bob, bobUpper, carol, dave := plcDID("alice"), plcDID("bob"), plcDID("bobup"), plcDID("carol"), plcDID("dave")
	h.addUser(alice, "alice.lemmy.world.ap.bridge.test", bridgePDS)
	h.setOrigin(alice, "lemmy.world", "Alice", "https://lemmy.world/u/Alice", "lemmy")
	h.addUser(bob, "bob.mastodon.social.ap.bridge.test", bridgePDS)
	h.setOrigin(bob, "mastodon.social", "bob", "https://mastodon.social/@bob", "mastodon")
	h.addUser(bobUpper, "bob2.mastodon.social.ap.bridge.test", bridgePDS)
	h.setOrigin(bobUpper, "mastodon.social", "BOB", "https://mastodon.social/@BOB", "mastodon")
	h.addUser(carol, "carol.lemmy.world.ap.bridge.test", bridgePDS)
	h.setOrigin(carol, "lemmy.world", "Carol", "https://lemmy.world/u/Carol", "lemmy")
	// A cleared row must not resolve by its old address.
	h.addUser(dave, "dave.elsewhere.test", otherPDS)
	h.setOrigin(dave, "", "", "", "")
	srv := httptest.NewServer(xrpc.New(h.app.store, nil))
	t.Cleanup(srv.Close)

	tests := []struct {
		name      string
		actor     string
		status    int
		did       string
		errName   string
		noQueries bool
	}{
		{name: "DID", actor: alice, status: 200, did: alice},
		{name: "handle", actor: "alice.lemmy.world.ap.bridge.test", status: 200, did: alice},
		{name: "handle upper-case", actor: "ALICE.lemmy.world.ap.bridge.test", status: 200, did: alice},
		{name: "name@host exact", actor: "Alice@lemmy.world", status: 200, did: alice},
		{name: "@name@host exact", actor: "@Alice@lemmy.world", status: 200, did: alice},
		{name: "case-insensitive unique", actor: "@alice@LEMMY.world", status: 200, did: alice},
		{name: "exact wins over a case-insensitive twin", actor: "bob@mastodon.social", status: 200, did: bob},
		{name: "exact upper twin", actor: "BOB@mastodon.social", status: 200, did: bobUpper},
		{name: "ambiguous", actor: "Bob@mastodon.social", status: 409, errName: "AmbiguousActor"},
		{name: "not found", actor: "nobody@lemmy.world", status: 404, errName: "ActorNotFound"},
		{name: "empty name", actor: "@@elsewhere.test", status: 400, errName: "InvalidRequest", noQueries: true},
		{name: "unknown DID", actor: plcDID("ghost"), status: 404, errName: "ActorNotFound"},
		{name: "empty", actor: "", status: 400, errName: "InvalidRequest", noQueries: true},
		{name: "bidi override in name", actor: "ali\u202Ece@lemmy.world", status: 400, errName: "InvalidRequest", noQueries: true},
		{name: "control character", actor: "al\x01ice@lemmy.world", status: 400, errName: "InvalidRequest", noQueries: true},
		{name: "invalid UTF-8", actor: "al\xffice@lemmy.world", status: 400, errName: "InvalidRequest", noQueries: true},
		{name: "name over 256 bytes", actor: string(bytes.Repeat([]byte("a"), 257)) + "@lemmy.world", status: 400, errName: "InvalidRequest", noQueries: true},
		{name: "host is an IP", actor: "alice@127.0.0.1", status: 400, errName: "InvalidRequest", noQueries: true},
		{name: "unsupported DID method", actor: "did:key:z6Mk", status: 400, errName: "InvalidRequest", noQueries: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Not parallel: the query counter is shared.
			before := h.db.n.Load()
			status, body := get(t, srv.URL, xrpc.MethodResolveActor, tt.actor)
			if status != tt.status {
				t.Fatalf("status = %d (%v), want %d", status, body, tt.status)
			}
			if tt.did != "" && body["did"] != tt.did {
				t.Errorf("did = %v, want %s", body["did"], tt.did)
			}
			if tt.errName != "" && (body["error"] != tt.errName || body["message"] == "") {
				t.Errorf("body = %v, want error %s with a message", body, tt.errName)
			}
			if q := h.db.n.Load() - before; tt.noQueries && q != 0 {
				t.Errorf("%d queries before refusing bad input", q)
			}
		})
	}
	if status, _ := get(t, srv.URL, xrpc.MethodResolveActor, "@dave@elsewhere.test"); status != 404 {
		t.Errorf("cleared address: status %d, want 404", status)
	}
}

func TestViewsCarryOriginFields(t *testing.T) {
	t.Parallel()
	h := setup(t)
	alice := plcDID("alice")
	h.net.Claim(alice, "alice.lemmy.world.ap.bridge.test", bridgePDS)
	h.handle(profileFrame(alice, "3laaa", bridgedFields("Alice", "lemmy.world")))
	h.handle(commitFrame(alice, "app.bsky.feed.post", "3lp1", "3lab1", "create", map[string]any{"text": "hello", "createdAt": "2026-11-29T12:00:00Z"}))
	srv := httptest.NewServer(xrpc.New(h.app.store, nil))
	t.Cleanup(srv.Close)

	status, p := get(t, srv.URL, xrpc.MethodGetProfile, "alice@lemmy.world")
	if status != 200 || p["origin"] != "lemmy.world" || p["originUsername"] != "Alice" ||
		p["originUrl"] != "https://lemmy.world/u/Alice" || p["originSoftware"] != "lemmy" || p["displayName"] != "Name 3laaa" {
		t.Fatalf("profile = %d %v", status, p)
	}
	status, feed := get(t, srv.URL, xrpc.MethodGetPosts, alice)
	if status != 200 {
		t.Fatalf("getPosts = %d %v", status, feed)
	}
	items := feed["feed"].([]any)
	if len(items) != 1 {
		t.Fatalf("feed = %v", feed)
	}
	author := items[0].(map[string]any)["author"].(map[string]any)
	if author["origin"] != "lemmy.world" || author["originUsername"] != "Alice" || author["originSoftware"] != "lemmy" {
		t.Errorf("author view = %v", author)
	}
	if hdr := feed["author"].(map[string]any); hdr["originUrl"] != "https://lemmy.world/u/Alice" {
		t.Errorf("profile header = %v", hdr)
	}
}

var errDown = errors.New("connection refused")

func TestOutageIsALogged500(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	srv := httptest.NewServer(xrpc.New(store.New(&spyDB{fail: func(string) error { return errDown }}), slog.New(slog.NewTextHandler(&logs, nil))))
	t.Cleanup(srv.Close)
	for _, actor := range []string{"alice@lemmy.world", "alice.bridge.test", plcDID("alice")} {
		for _, m := range []string{xrpc.MethodGetProfile, xrpc.MethodGetPosts, xrpc.MethodResolveActor} {
			logs.Reset()
			status, body := get(t, srv.URL, m, actor)
			if status != 500 || body["error"] != "InternalServerError" {
				t.Errorf("%s %s: %d %v, want 500 (never 404)", m, actor, status, body)
			}
			if !bytes.Contains(logs.Bytes(), []byte("connection refused")) {
				t.Errorf("%s %s: outage not logged", m, actor)
			}
		}
	}
}

func TestGetPostsPagesThroughTies(t *testing.T) {
	t.Parallel()
	h := setup(t)
	alice := plcDID("alice")
	h.net.Claim(alice, "alice.lemmy.world.ap.bridge.test", bridgePDS)
	h.handle(profileFrame(alice, "3laaa", nil))
	for _, rk := range []string{"3lp1", "3lp2", "3lp3"} {
		// Same createdAt: only the URI orders them.
		h.handle(commitFrame(alice, "app.bsky.feed.post", rk, "3l"+rk, "create", map[string]any{"text": rk, "createdAt": "2026-11-29T12:00:00Z"}))
	}
	srv := httptest.NewServer(xrpc.New(h.app.store, nil))
	t.Cleanup(srv.Close)
	seen := map[string]bool{}
	cursor := ""
	for page := 0; page < 3; page++ {
		u := srv.URL + "/xrpc/" + xrpc.MethodGetPosts + "?limit=2&actor=" + url.QueryEscape(alice)
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Feed   []struct{ URI string }
			Cursor string
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("page %d: %d %v", page, resp.StatusCode, err)
		}
		for _, p := range body.Feed {
			if seen[p.URI] {
				t.Fatalf("post %s served twice", p.URI)
			}
			seen[p.URI] = true
		}
		if cursor = body.Cursor; cursor == "" {
			break
		}
	}
	if len(seen) != 3 {
		t.Fatalf("paged through %d posts, want 3", len(seen))
	}
}
