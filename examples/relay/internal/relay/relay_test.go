package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/examples/relay/internal/store"
	"github.com/fedkit/fedkit/sig"
)

func get(h http.Handler, target string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
	return w
}

func TestRoutes(t *testing.T) {
	f := newFixture(t, nil)
	h := f.r.Handler()

	w := get(h, base+"/actor")
	var actor struct {
		ID, Type, Inbox string
		PublicKey       struct{ ID, Owner, PublicKeyPem string }
	}
	if err := json.Unmarshal(w.Body.Bytes(), &actor); err != nil || w.Header().Get("Content-Type") != ctActivity {
		t.Fatalf("actor: %v %q", err, w.Header().Get("Content-Type"))
	}
	if actor.ID != base+"/actor" || actor.Type != "Application" || actor.PublicKey.ID != base+"/actor#main-key" ||
		actor.PublicKey.Owner != actor.ID || !strings.Contains(actor.PublicKey.PublicKeyPem, "PUBLIC KEY") || actor.Inbox != base+"/inbox" {
		t.Errorf("actor = %+v", actor)
	}

	for target, code := range map[string]int{
		"/.well-known/webfinger?resource=acct:relay@relay.example":          200,
		"/.well-known/webfinger?resource=" + url.QueryEscape(base+"/actor"): 200,
		"/.well-known/webfinger?resource=acct:alice@relay.example":          404,
		"/.well-known/webfinger": 404,
		"/.well-known/nodeinfo":  200,
		"/nodeinfo/2.1":          200,
		"/followers":             200,
		"/":                      200,
		"/admin/status":          401,
		"/admin/status.json?token=admin-token-0123456789": 200,
		"/nope": 404,
	} {
		if w := get(h, base+target); w.Code != code {
			t.Errorf("GET %s = %d; want %d", target, w.Code, code)
		}
	}
	w = get(h, base+"/.well-known/webfinger?resource=acct:relay@relay.example")
	if !strings.Contains(w.Body.String(), `"href":"`+base+`/actor"`) {
		t.Errorf("webfinger = %s", w.Body)
	}
	f.subscribe("a", Public)
	w = get(h, base+"/nodeinfo/2.1")
	var ni struct {
		Software struct{ Name string }
		Metadata struct{ Subscribers int }
	}
	if err := json.Unmarshal(w.Body.Bytes(), &ni); err != nil || ni.Software.Name != SoftwareName || ni.Metadata.Subscribers != 1 {
		t.Errorf("nodeinfo = %s", w.Body)
	}
}

// TestAdminHeaders: the page with the operator's buttons cannot be framed
// (clickjacking), and a token in its URL is not sent on as a Referer.
func TestAdminHeaders(t *testing.T) {
	f := newFixture(t, nil)
	w := get(f.r.Handler(), base+"/admin/status?token=admin-token-0123456789")
	if w.Code != http.StatusOK || !strings.Contains(w.Header().Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
		w.Header().Get("Referrer-Policy") != "no-referrer" || w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("%d %v", w.Code, w.Header())
	}
}

func TestAdminDisabledWithoutToken(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.AdminToken = "" })
	if w := get(f.r.Handler(), base+"/admin/status?token="); w.Code != http.StatusNotFound {
		t.Fatalf("status page without a configured token: %d; want 404", w.Code)
	}
}

func TestFollow(t *testing.T) {
	tests := []struct {
		name      string
		mod       func(*Config)
		peer      string
		object    string
		wantCode  int
		wantStyle store.Style
		wantState store.State
		wantSends int
	}{
		{name: "mastodon", peer: "a", object: Public, wantCode: 202, wantStyle: store.StyleMastodon, wantState: store.StateActive, wantSends: 1},
		{name: "mastodon as:Public", peer: "a", object: "as:Public", wantCode: 202, wantStyle: store.StyleMastodon, wantState: store.StateActive, wantSends: 1},
		{name: "litepub", peer: "b", object: base + "/actor", wantCode: 202, wantStyle: store.StyleLitePub, wantState: store.StateActive, wantSends: 2},
		{name: "someone else", peer: "a", object: "https://relay.example/users/bob", wantCode: 422},
		{name: "manual approval", mod: func(c *Config) { c.ManualApproval = true }, peer: "a", object: Public, wantCode: 202,
			wantStyle: store.StyleMastodon, wantState: store.StatePending},
		{name: "blocked", mod: func(c *Config) { c.Blocked = []string{"example"} }, peer: "a", object: Public, wantCode: 403},
		{name: "not allowed", mod: func(c *Config) { c.Allowed = []string{"b.example"} }, peer: "a", object: Public, wantCode: 403},
		{name: "allowed", mod: func(c *Config) { c.Allowed = []string{"a.example"} }, peer: "a", object: Public, wantCode: 202,
			wantStyle: store.StyleMastodon, wantState: store.StateActive, wantSends: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.mod)
			before := f.look.calls[f.peers[tt.peer].actor]
			w := f.follow(tt.peer, tt.object)
			if tt.wantCode == http.StatusForbidden && f.look.calls[f.peers[tt.peer].actor] != before {
				t.Errorf("a refused domain's actor was fetched")
			}
			if w.Code != tt.wantCode {
				t.Fatalf("Follow = %d %s; want %d", w.Code, w.Body, tt.wantCode)
			}
			p := f.peers[tt.peer]
			sub, ok, _ := f.store.Get(context.Background(), p.actor)
			if tt.wantState == "" {
				if ok {
					t.Fatalf("stored %+v", sub)
				}
				return
			}
			if !ok || sub.Style != tt.wantStyle || sub.State != tt.wantState || sub.Inbox != "https://"+p.host+"/inbox" ||
				sub.FollowID != "https://"+p.host+"/follows/1" {
				t.Fatalf("stored %+v, %v", sub, ok)
			}
			sends := f.send.take()
			if len(sends) != tt.wantSends {
				t.Fatalf("%d sends; want %d", len(sends), tt.wantSends)
			}
			if tt.wantSends == 2 {
				var back struct{ Type, Actor, Object string }
				_ = json.Unmarshal(sends[1].Body, &back)
				if back.Type != "Follow" || back.Actor != base+"/actor" || back.Object != p.actor {
					t.Errorf("follow-back = %s", sends[1].Body)
				}
			}
			if tt.wantSends > 0 {
				s := sends[0]
				var acc struct {
					Type, Actor string
					Object      struct{ ID, Type, Actor, Object string }
				}
				_ = json.Unmarshal(s.Body, &acc)
				if acc.Type != "Accept" || acc.Actor != base+"/actor" || acc.Object.ID != sub.FollowID || acc.Object.Actor != p.actor ||
					s.KeyID != base+"/actor#main-key" || !slices.Equal(s.Inboxes, []string{sub.Inbox}) || s.Batch.Lane != driver.LanePriority {
					t.Fatalf("accept = %+v %s", s, s.Body)
				}
			}
		})
	}
}

func TestManualApprovalThenApprove(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.ManualApproval = true })
	f.follow("a", Public)
	if len(f.send.take()) != 0 {
		t.Fatal("Accept sent before approval")
	}
	// Pending subscribers cannot post.
	if w := f.create("a", "1"); w.Code != http.StatusForbidden {
		t.Fatalf("Create from a pending subscriber = %d", w.Code)
	}
	req := httptest.NewRequest(http.MethodPost, base+"/admin/subscribers/approve", strings.NewReader(url.Values{"actor": {f.peers["a"].actor}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer admin-token-0123456789")
	req.Header.Set("Accept", "application/json")
	w := httptest.NewRecorder()
	f.r.Handler().ServeHTTP(w, req)
	if w.Code != http.StatusNoContent {
		t.Fatalf("approve = %d %s", w.Code, w.Body)
	}
	if sub, _, _ := f.store.Get(context.Background(), f.peers["a"].actor); sub.State != store.StateActive {
		t.Fatalf("state = %s", sub.State)
	}
	if s := f.send.take(); len(s) != 1 || !strings.Contains(string(s[0].Body), `"Accept"`) {
		t.Fatalf("sends after approval = %+v", s)
	}
	// Remove: deleted and told with a Reject.
	req = httptest.NewRequest(http.MethodPost, base+"/admin/subscribers/remove?token=admin-token-0123456789&actor="+url.QueryEscape(f.peers["a"].actor), nil)
	w = httptest.NewRecorder()
	f.r.Handler().ServeHTTP(w, req)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("remove = %d", w.Code)
	}
	if _, ok, _ := f.store.Get(context.Background(), f.peers["a"].actor); ok {
		t.Fatal("still subscribed")
	}
	if s := f.send.take(); len(s) != 1 || !strings.Contains(string(s[0].Body), `"Reject"`) {
		t.Fatalf("sends after removal = %+v", s)
	}
}

func TestSignatureChecks(t *testing.T) {
	f := newFixture(t, nil)
	f.subscribe("a", Public)
	a, b := f.peers["a"], f.peers["b"]
	act := map[string]any{"id": "https://a.example/x", "type": "Create", "actor": a.actor, "to": []string{Public},
		"object": map[string]any{"id": "https://a.example/n", "type": "Note"}}
	if w := f.post(nil, act); w.Code != http.StatusUnauthorized {
		t.Errorf("unsigned = %d", w.Code)
	}
	if w := f.post(b.signer, act); w.Code != http.StatusUnauthorized {
		t.Errorf("signed by another actor = %d", w.Code)
	}
	f.look.mu.Lock()
	delete(f.look.docs, "https://c.example/actor")
	f.look.mu.Unlock()
	act["actor"] = f.peers["c"].actor
	if w := f.post(f.peers["c"].signer, act); w.Code != http.StatusUnauthorized {
		t.Errorf("unresolvable key = %d", w.Code)
	}
	if len(f.send.take()) != 0 {
		t.Error("refused activities were relayed")
	}
}

func TestKeyRotationRefetch(t *testing.T) {
	f := newFixture(t, nil)
	f.subscribe("a", Public)
	a := f.peers["a"]
	// a rotates its key: the cached one no longer verifies, so the relay
	// fetches the actor again once.
	newKey := loadKey(t, "forger")
	f.look.set(a.actor, actorDoc(a, newKey.Public()))
	before := f.look.calls[a.actor]
	a.signer, _ = newSigner(newKey, a.actor+"#main-key")
	if w := f.create("a", "1"); w.Code != http.StatusAccepted {
		t.Fatalf("Create after rotation = %d %s", w.Code, w.Body)
	}
	if got := f.look.calls[a.actor] - before; got != 1 {
		t.Errorf("%d refetches; want 1", got)
	}
}

func TestRelaying(t *testing.T) {
	f := newFixture(t, nil)
	f.subscribe("a", Public)
	f.subscribe("b", Public)
	f.subscribe("c", base+"/actor")
	a := f.peers["a"]

	t.Run("create", func(t *testing.T) {
		w := f.create("a", "1")
		if w.Code != http.StatusAccepted {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
		sends := f.send.take()
		if len(sends) != 2 {
			t.Fatalf("%d sends; want forward + announce", len(sends))
		}
		fw, an := sends[0], sends[1]
		if !slices.Equal(fw.Inboxes, []string{"https://b.example/inbox"}) || !strings.Contains(string(fw.Body), `"actor":"`+a.actor+`"`) {
			t.Errorf("forward = %+v %s", fw, fw.Body)
		}
		var ann struct{ Type, Actor, Object string }
		_ = json.Unmarshal(an.Body, &ann)
		if !slices.Equal(an.Inboxes, []string{"https://c.example/inbox"}) || ann.Type != "Announce" || ann.Actor != base+"/actor" ||
			ann.Object != "https://a.example/notes/1" {
			t.Errorf("announce = %+v %s", an, an.Body)
		}
		for _, s := range sends {
			if s.Batch.OrderingKey != "https://a.example/notes/1" || s.Batch.Tag != TagRelay {
				t.Errorf("batch = %+v; want the object as ordering key", s.Batch)
			}
		}
	})
	t.Run("not public", func(t *testing.T) {
		if w := f.create("a", "2", "https://a.example/followers"); w.Code != http.StatusAccepted {
			t.Fatalf("%d", w.Code)
		}
		if s := f.send.take(); len(s) != 0 {
			t.Fatalf("followers-only post relayed: %+v", s)
		}
	})
	t.Run("delete forwarded to all", func(t *testing.T) {
		w := f.post(a.signer, map[string]any{"id": "https://a.example/d", "type": "Delete", "actor": a.actor,
			"object": map[string]any{"id": "https://a.example/notes/1", "type": "Tombstone"}})
		if w.Code != http.StatusAccepted {
			t.Fatalf("%d", w.Code)
		}
		s := f.send.take()
		if len(s) != 1 || !slices.Equal(s[0].Inboxes, []string{"https://b.example/inbox", "https://c.example/inbox"}) ||
			s[0].Batch.OrderingKey != "https://a.example/notes/1" {
			t.Fatalf("sends = %+v", s)
		}
	})
	t.Run("announce", func(t *testing.T) {
		w := f.post(a.signer, map[string]any{"id": "https://a.example/boost", "type": "Announce", "actor": a.actor,
			"to": []string{Public}, "object": "https://elsewhere.example/notes/9"})
		if w.Code != http.StatusAccepted {
			t.Fatalf("%d", w.Code)
		}
		s := f.send.take()
		if len(s) != 2 || !strings.Contains(string(s[1].Body), `"object":"https://elsewhere.example/notes/9"`) {
			t.Fatalf("sends = %+v", s)
		}
	})
	t.Run("update and move forwarded to all", func(t *testing.T) {
		for _, act := range []map[string]any{
			{"id": "https://a.example/e1", "type": "Update", "actor": a.actor, "to": []string{Public},
				"object": map[string]any{"id": "https://a.example/notes/1", "type": "Note", "content": "edited"}},
			{"id": "https://a.example/m1", "type": "Move", "actor": a.actor, "object": a.actor, "target": "https://elsewhere.example/actor"},
		} {
			if w := f.post(a.signer, act); w.Code != http.StatusAccepted {
				t.Fatalf("%s = %d", act["type"], w.Code)
			}
			s := f.send.take()
			if len(s) != 1 || !slices.Equal(s[0].Inboxes, []string{"https://b.example/inbox", "https://c.example/inbox"}) ||
				s[0].Batch.OrderingKey == "" || !strings.Contains(string(s[0].Body), `"type":"`+act["type"].(string)+`"`) {
				t.Fatalf("%s: sends = %+v; want the activity forwarded as is to b and c", act["type"], s)
			}
		}
		f.post(a.signer, map[string]any{"id": "https://a.example/e2", "type": "Update", "actor": a.actor, "to": []string{"https://a.example/followers"},
			"object": map[string]any{"id": "https://a.example/notes/2", "type": "Note"}})
		if s := f.send.take(); len(s) != 0 {
			t.Fatalf("a followers-only Update was relayed: %+v", s)
		}
	})
	t.Run("no object", func(t *testing.T) {
		w := f.post(a.signer, map[string]any{"id": "https://a.example/m", "type": "Move", "actor": a.actor})
		if w.Code != http.StatusBadRequest {
			t.Fatalf("%d", w.Code)
		}
	})
	t.Run("ignored types", func(t *testing.T) {
		for _, typ := range []string{"Like", "Accept", "Add"} {
			if w := f.post(a.signer, map[string]any{"id": "https://a.example/l", "type": typ, "actor": a.actor, "object": "x"}); w.Code != http.StatusAccepted {
				t.Errorf("%s = %d", typ, w.Code)
			}
		}
		if s := f.send.take(); len(s) != 0 {
			t.Fatalf("sends = %+v", s)
		}
	})
	t.Run("undo of a like keeps the subscription", func(t *testing.T) {
		f.post(a.signer, map[string]any{"id": "https://a.example/u", "type": "Undo", "actor": a.actor,
			"object": map[string]any{"id": "https://a.example/l", "type": "Like", "actor": a.actor}})
		if _, ok, _ := f.store.Get(context.Background(), a.actor); !ok {
			t.Fatal("unsubscribed by an Undo Like")
		}
	})
	t.Run("undo by follow id", func(t *testing.T) {
		f.post(a.signer, map[string]any{"id": "https://a.example/u2", "type": "Undo", "actor": a.actor, "object": "https://a.example/follows/1"})
		if _, ok, _ := f.store.Get(context.Background(), a.actor); ok {
			t.Fatal("still subscribed")
		}
	})
}

func TestSkipUnsubscribed(t *testing.T) {
	f := newFixture(t, nil)
	f.subscribe("a", Public)
	skip := SkipUnsubscribed(f.store, 0)
	ctx := context.Background()
	relayed := &driver.Envelope{Tag: TagRelay}
	if skip(ctx, "https://a.example/inbox", relayed) {
		t.Error("skipped an active subscriber")
	}
	if !skip(ctx, "https://gone.example/inbox", relayed) {
		t.Error("delivered to a non-subscriber")
	}
	if skip(ctx, "https://gone.example/inbox", &driver.Envelope{Tag: TagAccept}) {
		t.Error("skipped an Accept/Reject")
	}
}

func TestRFC9421Accepted(t *testing.T) {
	f := newFixture(t, nil)
	a := f.peers["a"]
	b, _ := json.Marshal(map[string]any{"id": "https://a.example/follows/9", "type": "Follow", "actor": a.actor, "object": Public})
	req := httptest.NewRequest(http.MethodPost, base+"/inbox", strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/activity+json")
	if err := a.signer.Sign(req, sig.SchemeRFC9421); err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	f.r.Handler().ServeHTTP(w, req)
	if w.Code != http.StatusAccepted {
		t.Fatalf("RFC 9421 signed Follow = %d %s", w.Code, w.Body)
	}
}

// TestNonceReplay: a signature with an RFC 9421 nonce is accepted once;
// Mastodon's, without a nonce, is accepted each time it comes.
func TestNonceReplay(t *testing.T) {
	f := newFixture(t, nil)
	a := f.peers["a"]
	f.subscribe("a", Public)
	nonced, err := sig.NewSigner(a.key, a.actor+"#main-key", &sig.SignerConfig{Nonce: sig.RandomNonce})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"id": "https://a.example/notes/r/activity", "type": "Create", "actor": a.actor,
		"to": []string{Public}, "object": map[string]any{"id": "https://a.example/notes/r", "type": "Note"}})
	for _, tt := range []struct {
		name       string
		signer     *sig.Signer
		secondCode int
	}{
		{"with nonce", nonced, http.StatusUnauthorized},
		{"without nonce", a.signer, http.StatusAccepted},
	} {
		req := httptest.NewRequest(http.MethodPost, base+"/inbox", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/activity+json")
		if err := tt.signer.Sign(req, sig.SchemeRFC9421); err != nil {
			t.Fatal(err)
		}
		for i, want := range []int{http.StatusAccepted, tt.secondCode} {
			replay := req.Clone(context.Background())
			replay.Body = io.NopCloser(bytes.NewReader(body))
			w := httptest.NewRecorder()
			f.r.Handler().ServeHTTP(w, replay)
			if w.Code != want {
				t.Errorf("%s: request %d = %d; want %d", tt.name, i+1, w.Code, want)
			}
		}
	}
}
