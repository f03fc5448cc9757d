package fetch_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/fetch"
)

func TestResolveAs(t *testing.T) {
	t.Parallel()
	s := newSite(t, "mastodon.test")
	s.mux.HandleFunc("/.well-known/webfinger", func(w http.ResponseWriter, r *http.Request) {
		switch strings.ToLower(r.URL.Query().Get("resource")) {
		case "acct:alice@" + s.host:
			w.Header().Set("Content-Type", "application/jrd+json")
			_, _ = w.Write([]byte(s.expand(hostExpand(s, mastodonJRD))))
		case "acct:carol@" + s.host: // the actor it names is not served
			w.Header().Set("Content-Type", "application/jrd+json")
			_, _ = w.Write([]byte(s.expand(`{"subject":"acct:carol@` + s.host + `","links":[{"rel":"self","type":"application/activity+json","href":"{base}/users/carol"}]}`)))
		case "acct:gone@" + s.host:
			w.WriteHeader(http.StatusGone)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	})
	s.ap("/users/Alice", `{"@context":"https://www.w3.org/ns/activitystreams","id":"{base}/users/Alice","type":"Person","inbox":"{base}/users/Alice/inbox"}`)
	type actor struct{ ID, Inbox string }
	f := newFetcher(t, nil)
	cases := []struct {
		name, handle string
		wantInbox    string
		wantErr      error
	}{
		{"handle with a leading @", "@alice@" + s.host, s.url("/users/Alice/inbox"), nil},
		{"acct: URI", "acct:Alice@" + s.host, s.url("/users/Alice/inbox"), nil},
		{"unknown user", "bob@" + s.host, "", fetch.ErrNotFound},
		{"actor not served", "carol@" + s.host, "", fetch.ErrNotFound},
		{"gone", "gone@" + s.host, "", fetch.ErrGone},
		{"not a handle", "https://" + s.host + "/users/Alice", "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, d, err := fetch.ResolveAs[actor](context.Background(), f, tc.handle)
			if tc.wantInbox == "" {
				if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
					t.Fatalf("ResolveAs: %v; want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Inbox != tc.wantInbox || d.ID != s.url("/users/Alice") {
				t.Fatalf("got %+v from %s", a, d.ID)
			}
		})
	}
}
