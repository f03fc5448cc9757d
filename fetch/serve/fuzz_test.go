package serve_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/fetch/serve"
	"github.com/fedkit/fedkit/sig/inbox"
)

// FuzzAcctUser: WebFinger resources come from anyone's query string. A
// user found is never empty and never carries a separator.
func FuzzAcctUser(f *testing.F) {
	f.Fuzz(func(t *testing.T, resource, host string) {
		user, ok := serve.AcctUser(resource, host)
		if ok && (user == "" || strings.ContainsAny(user, "@/?#: ")) {
			t.Fatalf("AcctUser(%q, %q) = %q", resource, host, user)
		}
	})
}

// FuzzFollowersReceive: what a follower's server posts is anyone's. No
// activity panics Followers, and none by carol changes whether bob
// follows or makes Inboxes list anything but http(s) URLs.
func FuzzFollowersReceive(f *testing.F) {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	me, _ := serve.NewActor(&serve.ActorOpts{ID: actorID, Key: &serve.ActorKey{Public: pub}})
	f.Fuzz(func(t *testing.T, typ, object, body string) {
		fs := &serve.Followers{Outbox: &serve.Outbox{Actor: me, Sender: &queue{}}, Actors: remoteActors()}
		receive := fs.Receive(nil)
		if err := receive(context.Background(), &inbox.Activity{Body: json.RawMessage(followOf(bobID, follow1, actorID)), ID: follow1, Type: "Follow", Actor: bobID, Object: actorID}); err != nil {
			t.Fatal(err)
		}
		_ = receive(context.Background(), &inbox.Activity{Body: json.RawMessage(body), Type: typ, Actor: carolID, Object: object})
		if !fs.Has(bobID) {
			t.Fatalf("carol's %s %q of %q unfollowed bob", typ, body, object)
		}
		for _, in := range fs.Inboxes() {
			if !strings.HasPrefix(in, "https://") {
				t.Fatalf("inbox %q", in)
			}
		}
	})
}

// FuzzRoutes: whatever actor NewActor accepts, Routes serves it or says
// why not; it never hands ServeMux a pattern it panics on.
func FuzzRoutes(f *testing.F) {
	f.Fuzz(func(t *testing.T, id, inboxURL, shared string) {
		a, err := serve.NewActor(&serve.ActorOpts{ID: id, Username: "alice", Inbox: inboxURL, SharedInbox: shared})
		if err != nil {
			return
		}
		mux, err := serve.Routes(http.NotFoundHandler(), a)
		if err != nil {
			return
		}
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/", nil)
		r.URL, _ = url.Parse(a.ID)
		mux.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d", a.ID, w.Code)
		}
	})
}

// FuzzActorUnmarshal: a remote actor document is anyone's. Decoding never
// panics, and what decodes encodes again.
func FuzzActorUnmarshal(f *testing.F) {
	f.Fuzz(func(t *testing.T, doc []byte) {
		var a serve.Actor
		if json.Unmarshal(doc, &a) != nil {
			return
		}
		if _, err := json.Marshal(&a); err != nil {
			t.Fatalf("decoded %q but cannot encode it: %v", doc, err)
		}
	})
}
