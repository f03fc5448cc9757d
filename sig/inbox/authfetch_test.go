package inbox_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/inbox"
)

func TestAuthorizedFetch(t *testing.T) {
	t.Parallel()
	alice := newPeer(t, "https://a.example/users/alice")
	rotated := newPeer(t, alice.actor)
	keys := newKeyring(alice)
	keys.fresh[alice.keyID] = &sig.Key{Public: rotated.key.Public(), Owner: alice.actor}
	var seen string
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = ""
		if res, ok := inbox.SignerFromContext(r.Context()); ok {
			seen = res.Owner
		}
		w.WriteHeader(200)
	})
	h, err := inbox.NewAuthorizedFetch(keys, next, &inbox.AuthorizedFetchConfig{
		Allow: func(r *http.Request) bool { return r.URL.Path == "/actor" },
	})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path, accept string, s *sig.Signer) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "https://local.example"+path, nil)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		if s != nil {
			if err := s.Sign(r, sig.SchemeCavage); err != nil {
				t.Fatal(err)
			}
		}
		return r
	}
	const ap = "application/activity+json, application/ld+json"
	tests := []struct {
		name   string
		req    *http.Request
		status int
		signer string
	}{
		{"unsigned ActivityPub GET", get("/users/bob", ap, nil), 401, ""},
		{"unsigned ld+json with profile", get("/users/bob", `application/ld+json; profile="https://www.w3.org/ns/activitystreams"`, nil), 401, ""},
		{"signed ActivityPub GET", get("/users/bob", ap, alice.signer), 200, alice.actor},
		{"signed with a rotated key", get("/users/bob", ap, rotated.signer), 200, alice.actor},
		{"the instance actor, unsigned", get("/actor", ap, nil), 200, ""},
		{"a web page, unsigned", get("/@bob", "text/html", nil), 200, ""},
		{"ActivityPub refused with q=0", get("/users/bob", "text/html, application/activity+json;q=0", nil), 200, ""},
		{"malformed signature", func() *http.Request {
			r := get("/users/bob", ap, nil)
			r.Header.Set("Signature", "nonsense")
			return r
		}(), 400, ""},
		{"POST passes to the inbox's own checks", httptest.NewRequest(http.MethodPost, "https://local.example/inbox", nil), 200, ""},
	}
	for _, tc := range tests {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, tc.req)
		if w.Code != tc.status {
			t.Errorf("%s: status %d %q; want %d", tc.name, w.Code, w.Body, tc.status)
			continue
		}
		if tc.status == 200 && seen != tc.signer {
			t.Errorf("%s: next saw signer %q; want %q", tc.name, seen, tc.signer)
		}
	}
}

func TestWantsActivityPub(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		accept string
		want   bool
	}{
		{"application/activity+json", true},
		{"application/activity+json, application/ld+json", true},
		{`application/ld+json; profile="https://www.w3.org/ns/activitystreams"`, true},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", false},
		{"application/activity+json;q=0", false},
		{"application/json", false},
		{"", false},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if tc.accept != "" {
			r.Header.Set("Accept", tc.accept)
		}
		if got := inbox.WantsActivityPub(r); got != tc.want {
			t.Errorf("WantsActivityPub(%q) = %v", tc.accept, got)
		}
	}
}
