package serve_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/fetch/serve"
)

func actorAt(t *testing.T, opts serve.ActorOpts) *serve.Actor {
	t.Helper()
	a, err := serve.NewActor(&opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	alice := actorAt(t, serve.ActorOpts{ID: actorID, Username: "alice", SharedInbox: "https://social.example/inbox"})
	bob := actorAt(t, serve.ActorOpts{ID: "https://social.example/@bob/", Username: "bob", Inbox: "https://social.example/@bob/inbox"})
	inst := actorAt(t, serve.ActorOpts{ID: "https://social.example/actor", Type: serve.TypeApplication})
	inbox := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	mux, err := serve.Routes(inbox, alice, bob, inst)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, method, target string
		wantStatus           int
		wantBody             string
	}{
		{"actor document", "GET", actorID, 200, `"preferredUsername":"alice"`},
		{"actor document, HEAD", "HEAD", actorID, 200, ""},
		{"actor at a path ending in a slash", "GET", "https://social.example/@bob/", 200, `"preferredUsername":"bob"`},
		{"below that path", "GET", "https://social.example/@bob/x", 404, ""},
		{"instance actor", "GET", "https://social.example/actor", 200, `"type":"Application"`},
		{"inbox", "POST", actorID + "/inbox", 202, ""},
		{"shared inbox", "POST", "https://social.example/inbox", 202, ""},
		{"inbox of a path with a slash", "POST", "https://social.example/@bob/inbox", 202, ""},
		{"GET of an inbox", "GET", actorID + "/inbox", 405, ""},
		{"POST to an actor", "POST", actorID, 405, ""},
		{"WebFinger by handle", "GET", "https://social.example/.well-known/webfinger?resource=acct:alice@social.example", 200, `"href":"` + actorID + `"`},
		{"WebFinger by actor URL", "GET", "https://social.example/.well-known/webfinger?resource=https://social.example/@bob/", 200, `"subject":"acct:bob@social.example"`},
		{"WebFinger of a user not here", "GET", "https://social.example/.well-known/webfinger?resource=acct:carol@social.example", 404, ""},
		{"WebFinger of another host", "GET", "https://social.example/.well-known/webfinger?resource=acct:alice@other.example", 404, ""},
		{"other path", "GET", "https://social.example/users/carol", 404, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, httptest.NewRequest(tc.method, tc.target, nil))
			if w.Code != tc.wantStatus || !strings.Contains(w.Body.String(), tc.wantBody) {
				t.Fatalf("%d %s; want %d with %s", w.Code, w.Body, tc.wantStatus, tc.wantBody)
			}
			if tc.method == "GET" && tc.wantStatus == 200 && !strings.Contains(tc.target, "webfinger") && !fetch.IsActivityPub(w.Header().Get("Content-Type")) {
				t.Errorf("Content-Type %q", w.Header().Get("Content-Type"))
			}
		})
	}
}

func TestRoutesRefused(t *testing.T) {
	t.Parallel()
	inbox := http.NotFoundHandler()
	alice := actorAt(t, serve.ActorOpts{ID: actorID, Username: "alice"})
	cases := []struct {
		name   string
		inbox  http.Handler
		actors []*serve.Actor
	}{
		{"no actors", inbox, nil},
		{"no inbox", nil, []*serve.Actor{alice}},
		{"two hosts", inbox, []*serve.Actor{alice, actorAt(t, serve.ActorOpts{ID: "https://other.example/users/bob"})}},
		{"inbox on another host", inbox, []*serve.Actor{actorAt(t, serve.ActorOpts{ID: actorID, Inbox: "https://other.example/inbox"})}},
		{"shared inbox on another host", inbox, []*serve.Actor{actorAt(t, serve.ActorOpts{ID: actorID, SharedInbox: "https://other.example/inbox"})}},
		{"two actors at one URL", inbox, []*serve.Actor{alice, actorAt(t, serve.ActorOpts{ID: actorID, Username: "alias"})}},
		{"actor at the root", inbox, []*serve.Actor{actorAt(t, serve.ActorOpts{ID: "https://social.example/"})}},
		{"actor in the well-known tree", inbox, []*serve.Actor{actorAt(t, serve.ActorOpts{ID: "https://social.example/.well-known/actor"})}},
		{"a path ServeMux would read as a wildcard", inbox, []*serve.Actor{actorAt(t, serve.ActorOpts{ID: "https://social.example/users/%7Bname%7D"})}},
		{"an unclean path, which ServeMux never matches", inbox, []*serve.Actor{actorAt(t, serve.ActorOpts{ID: "https://social.example/users/./alice"})}},
		{"a path with a double slash", inbox, []*serve.Actor{actorAt(t, serve.ActorOpts{ID: "https://social.example//alice"})}},
		{"an inbox with a query", inbox, []*serve.Actor{actorAt(t, serve.ActorOpts{ID: actorID, Inbox: actorID + "/inbox?x=1"})}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := serve.Routes(tc.inbox, tc.actors...); !errors.Is(err, serve.ErrRoutes) {
				t.Fatalf("Routes: %v; want ErrRoutes", err)
			}
		})
	}
}

// Two actors sharing one inbox URL are one route, not a conflict.
func TestRoutesSharedInboxURL(t *testing.T) {
	t.Parallel()
	shared := "https://social.example/inbox"
	a := actorAt(t, serve.ActorOpts{ID: actorID, Username: "alice", Inbox: shared})
	b := actorAt(t, serve.ActorOpts{ID: "https://social.example/users/bob", Username: "bob", SharedInbox: shared})
	mux, err := serve.Routes(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(202) }), a, b)
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("POST", shared, nil))
	if w.Code != 202 {
		t.Fatalf("%d", w.Code)
	}
}
