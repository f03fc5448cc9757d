package serve_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/fetch/serve"
	"github.com/fedkit/fedkit/sig"
)

const actorID = "https://social.example/users/alice"

func edPair(t *testing.T) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

// docs is a fetch.Lookuper serving one document.
type docs map[string][]byte

func (d docs) Lookup(_ context.Context, raw string) (*fetch.Document, error) {
	b, ok := d[raw]
	if !ok {
		return nil, &fetch.StatusError{URL: raw, StatusCode: 404}
	}
	var h struct{ ID string }
	_ = json.Unmarshal(b, &h)
	u, _ := url.Parse(raw)
	return &fetch.Document{URL: u, ID: h.ID, Raw: b}, nil
}

func TestNewActor(t *testing.T) {
	t.Parallel()
	sigPub, _ := edPair(t)
	proofPub, _ := edPair(t)
	a, err := serve.NewActor(&serve.ActorOpts{
		ID: actorID, Type: serve.TypeService, Username: "alice", Name: "Alice",
		SharedInbox: "https://social.example/inbox",
		Key:         &serve.ActorKey{Public: sigPub}, AssertionKeys: []serve.ActorKey{{Public: proofPub}},
	})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	a.ServeHTTP(w, httptest.NewRequest("GET", actorID, nil))
	if ct := w.Header().Get("Content-Type"); !fetch.IsActivityPub(ct) {
		t.Errorf("Content-Type %q is not ActivityPub", ct)
	}
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{
		"id": actorID, "type": "Service", "preferredUsername": "alice", "inbox": actorID + "/inbox",
		"outbox": actorID + "/outbox", "followers": actorID + "/followers", "following": actorID + "/following",
		"manuallyApprovesFollowers": false,
	} {
		if m[k] != want {
			t.Errorf("%s = %v; want %v", k, m[k], want)
		}
	}
	if ep, _ := m["endpoints"].(map[string]any); ep["sharedInbox"] != "https://social.example/inbox" {
		t.Errorf("endpoints = %v", m["endpoints"])
	}
	ctx, _ := json.Marshal(m["@context"])
	for _, c := range []string{serve.ContextActivityStreams, serve.ContextSecurity, serve.ContextDataIntegrity, serve.ContextMultikey, "as:manuallyApprovesFollowers"} {
		if !strings.Contains(string(ctx), c) {
			t.Errorf("@context %s lacks %s", ctx, c)
		}
	}
	if a.KeyID() != actorID+"#main-key" {
		t.Errorf("KeyID = %q", a.KeyID())
	}
	// What fetch.KeyResolver reads of it: both keys, owned by the actor.
	r, _ := fetch.NewKeyResolver(docs{actorID: w.Body.Bytes()}, nil)
	for id, want := range map[string]ed25519.PublicKey{actorID + "#main-key": sigPub, actorID + "#ed25519-key": proofPub} {
		kid, _ := sig.ParseKeyID(id)
		k, err := r.ResolveKey(context.Background(), kid)
		if err != nil || k.Owner != actorID || !want.Equal(k.Public) {
			t.Errorf("ResolveKey(%s) = %+v, %v", id, k, err)
		}
	}
}

func TestNewActorRefuses(t *testing.T) {
	t.Parallel()
	for name, o := range map[string]*serve.ActorOpts{
		"nil":            nil,
		"no id":          {},
		"relative id":    {ID: "/users/alice"},
		"id with a hash": {ID: actorID + "#me"},
		"unknown type":   {ID: actorID, Type: "Robot"},
		"bad key":        {ID: actorID, Key: &serve.ActorKey{Public: "not a key"}},
	} {
		if _, err := serve.NewActor(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	a, err := serve.NewActor(&serve.ActorOpts{ID: actorID})
	if err != nil || a.Type != serve.TypePerson || a.PublicKey != nil || a.KeyID() != "" {
		t.Fatalf("defaults: %+v, %v", a, err)
	}
}

func TestWebFinger(t *testing.T) {
	t.Parallel()
	h := serve.WebFinger(func(_ context.Context, res string) (*serve.Account, error) {
		if res == "acct:broken@social.example" {
			return nil, errors.New("db down")
		}
		if res == "acct:gone@social.example" {
			return nil, serve.ErrNotFound
		}
		if u, ok := serve.AcctUser(res, "social.example"); (ok && u == "alice") || res == actorID {
			return &serve.Account{Subject: "acct:alice@social.example", Aliases: []string{actorID},
				Actor: actorID, ProfilePage: "https://social.example/@alice"}, nil
		}
		return nil, nil
	})
	do := func(method, resource string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(method, "https://social.example/.well-known/webfinger?resource="+url.QueryEscape(resource), nil))
		return w
	}
	for _, tc := range []struct {
		name, method, resource string
		status                 int
	}{
		{"acct", "GET", "acct:alice@social.example", 200},
		{"acct in another case", "GET", "acct:alice@SOCIAL.example", 200},
		{"the actor URL as alias", "GET", actorID, 200},
		{"unknown", "GET", "acct:bob@social.example", 404},
		{"another host", "GET", "acct:alice@other.example", 404},
		{"ErrNotFound", "GET", "acct:gone@social.example", 404},
		{"failure", "GET", "acct:broken@social.example", 500},
		{"no resource", "GET", "", 400},
		{"preflight", "OPTIONS", "acct:alice@social.example", 204},
		{"POST", "POST", "acct:alice@social.example", 405},
	} {
		w := do(tc.method, tc.resource)
		if w.Code != tc.status {
			t.Errorf("%s: status %d; want %d", tc.name, w.Code, tc.status)
		}
		if w.Header().Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s: no CORS header", tc.name)
		}
	}
	w := do("GET", "acct:alice@social.example")
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/jrd+json") {
		t.Errorf("Content-Type %q", ct)
	}
	jrd, err := fetch.ParseJRD(w.Body.Bytes())
	if err != nil || jrd.Subject != "acct:alice@social.example" {
		t.Fatalf("ParseJRD = %+v, %v", jrd, err)
	}
	if self := jrd.Actors(); len(self) != 1 || self[0].Href != actorID {
		t.Fatalf("self links %+v", self)
	}
}

func TestAcctUser(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		resource, host, user string
		ok                   bool
	}{
		{"acct:alice@social.example", "social.example", "alice", true},
		{"alice@social.example", "social.example", "alice", true},
		{"acct:Alice@Social.Example", "social.example", "Alice", true},
		{"acct:alice@127.0.0.1:8080", "127.0.0.1:8080", "alice", true},
		{"acct:alice@other.example", "social.example", "", false},
		{"https://social.example/users/alice", "social.example", "", false},
		{"acct:", "social.example", "", false},
	} {
		u, ok := serve.AcctUser(tc.resource, tc.host)
		if u != tc.user || ok != tc.ok {
			t.Errorf("AcctUser(%q, %q) = %q, %v", tc.resource, tc.host, u, ok)
		}
	}
}

func TestHostMeta(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	serve.HostMeta("https://social.example/").ServeHTTP(w, httptest.NewRequest("GET", "/.well-known/host-meta", nil))
	tmpl, err := fetch.ParseHostMeta(w.Body.Bytes())
	if err != nil || tmpl != "https://social.example/.well-known/webfinger?resource={uri}" {
		t.Fatalf("template %q, %v", tmpl, err)
	}
	if !strings.HasPrefix(w.Header().Get("Content-Type"), "application/xrd+xml") || w.Header().Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("headers %v", w.Header())
	}
}

func TestNodeInfo(t *testing.T) {
	t.Parallel()
	users, posts := int64(3), int64(42)
	open := true
	h := serve.NodeInfo("https://social.example", func(context.Context) (*fetch.NodeInfo, error) {
		return &fetch.NodeInfo{Software: fetch.Software{Name: "MyServer", Version: "1.0", Repository: "https://git.example/my"},
			OpenRegistrations: &open, Usage: fetch.Usage{Users: fetch.UserCounts{Total: &users}, LocalPosts: &posts}}, nil
	})
	get := func(path string) (*httptest.ResponseRecorder, []byte) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "https://social.example"+path, nil))
		b, _ := io.ReadAll(w.Body)
		return w, b
	}
	_, links := get(serve.NodeInfoWellKnownPath)
	href, version, err := fetch.ParseNodeInfoLinks(links)
	if err != nil || href != "https://social.example/nodeinfo/2.1" || version != "2.1" {
		t.Fatalf("links: %q %q %v", href, version, err)
	}
	for _, v := range []string{"2.1", "2.0"} {
		w, b := get("/nodeinfo/" + v)
		if !strings.Contains(w.Header().Get("Content-Type"), "schema/"+v+"#") {
			t.Errorf("%s: Content-Type %q", v, w.Header().Get("Content-Type"))
		}
		ni, err := fetch.ParseNodeInfo(b)
		if err != nil || ni.Version != v || ni.Software.Name != "myserver" || *ni.Usage.Users.Total != 3 || *ni.Usage.LocalPosts != 42 ||
			ni.OpenRegistrations == nil || !*ni.OpenRegistrations || len(ni.Protocols) != 1 || ni.Protocols[0] != "activitypub" {
			t.Errorf("%s: %+v, %v", v, ni, err)
		}
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		for _, req := range []string{"version", "software", "protocols", "services", "openRegistrations", "usage", "metadata"} {
			if _, ok := m[req]; !ok {
				t.Errorf("%s: required member %s missing", v, req)
			}
		}
		_, hasRepo := m["software"].(map[string]any)["repository"]
		if hasRepo != (v == "2.1") {
			t.Errorf("%s: software.repository present = %v", v, hasRepo)
		}
	}
	if w, _ := get("/nodeinfo/1.0"); w.Code != 404 {
		t.Errorf("unknown version: %d", w.Code)
	}
}

func TestWriteJSON(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	serve.WriteJSON(w, http.StatusCreated, map[string]string{"a": "b"})
	if w.Code != 201 || w.Header().Get("Content-Type") != serve.ContentTypeActivityJSON || strings.TrimSpace(w.Body.String()) != `{"a":"b"}` {
		t.Fatalf("%d %v %s", w.Code, w.Header(), w.Body)
	}
}

func TestAccounts(t *testing.T) {
	t.Parallel()
	find := serve.Accounts("social.example", map[string]string{"alice": actorID, "bob": "https://social.example/users/bob"})
	for _, tc := range []struct{ resource, actor string }{
		{"acct:alice@social.example", actorID},
		{"acct:bob@Social.Example", "https://social.example/users/bob"},
		{actorID, actorID},
		{"acct:carol@social.example", ""},
		{"acct:alice@other.example", ""},
	} {
		a, err := find(context.Background(), tc.resource)
		if err != nil || (a == nil) != (tc.actor == "") || (a != nil && a.Actor != tc.actor) {
			t.Errorf("%s: %+v, %v", tc.resource, a, err)
		}
	}
	a, _ := find(context.Background(), "acct:alice@SOCIAL.example")
	if a.Subject != "acct:alice@social.example" {
		t.Errorf("subject %q", a.Subject)
	}
}
