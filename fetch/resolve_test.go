package fetch_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/fetch"
)

// fakeWF answers WebFinger from a map keyed by the lower-cased handle.
type fakeWF struct {
	answers map[string]*fetch.JRD
	errs    map[string]error
	asked   []string
}

func (f *fakeWF) WebFinger(ctx context.Context, handle string) (*fetch.JRD, error) {
	f.asked = append(f.asked, handle)
	k := strings.ToLower(handle)
	if err := f.errs[k]; err != nil {
		return nil, err
	}
	if j := f.answers[k]; j != nil {
		return j, nil
	}
	return nil, &fetch.StatusError{URL: "https://" + k, StatusCode: 404}
}

func jrd(subject string, selfs ...string) *fetch.JRD {
	j := &fetch.JRD{Subject: subject}
	for _, s := range selfs {
		j.Links = append(j.Links, fetch.Link{Rel: "self", Type: "application/activity+json", Href: s})
	}
	return j
}

func TestResolveWith(t *testing.T) {
	t.Parallel()
	const actor = "https://social.example/users/Alice"
	wf := func() *fakeWF {
		return &fakeWF{
			answers: map[string]*fetch.JRD{
				"alice@social.example":      jrd("acct:Alice@Social.Example", actor),
				"bob@old.example":           jrd("acct:bob@new.example", "https://new.example/u/bob"),
				"bob@new.example":           jrd("acct:bob@new.example", "https://new.example/u/bob"),
				"carol@old.example":         jrd("acct:carol@mid.example", "https://x"),
				"carol@mid.example":         jrd("acct:carol@far.example", "https://far.example/u/carol"),
				"nolink@social.example":     {Subject: "acct:nolink@social.example", Links: []fetch.Link{{Rel: "self", Type: "text/html", Href: "https://x"}}},
				"three@social.example":      jrd("acct:three@social.example@extra", "https://social.example/u/three"),
				"bare@social.example":       jrd("bare@social.example", "https://social.example/u/bare"),
				"nouser@social.example":     jrd("acct:@social.example", "https://x"),
				"lemmy@lemmy.example":       jrd("acct:lemmy@lemmy.example", "https://lemmy.example/u/lemmy", "https://lemmy.example/c/lemmy"),
				"redirnoself@old.example":   jrd("acct:redirnoself@new.example"),
				"redirnoself@new.example":   jrd("acct:redirnoself@new.example"),
				"dan@social.example":        jrd("acct:dan@elsewhere.example", "https://x"),
				"tothree@social.example":    jrd("acct:tothree@other.example", "https://x"),
				"tothree@other.example":     jrd("acct:tothree@other.example@x", "https://other.example/u/t"),
				"casey@social.example":      jrd("acct:CASEY@SOCIAL.EXAMPLE", "https://social.example/u/casey"),
				"upper@social.example":      jrd("acct:Upper@social.example", "https://social.example/u/upper"),
				"moved@social.example":      jrd("acct:moved@gone.example", "https://x"),
				"wrongactor@social.example": jrd("acct:wrongactor@social.example", "https://social.example/u/someone-else"),
			},
			errs: map[string]error{
				"gone@social.example":   &fetch.StatusError{URL: "u", StatusCode: 410},
				"moved@gone.example":    &fetch.StatusError{URL: "u", StatusCode: 410},
				"dan@elsewhere.example": &fetch.StatusError{URL: "u", StatusCode: 503},
			},
		}
	}
	tests := []struct {
		name    string
		handle  string
		confirm string // expected actor for Confirm; "" uses Resolve
		handleW string
		actorW  string
		asks    int
		err     error
	}{
		{"subject spelling adopted", "@alice@social.example", "", "Alice@social.example", actor, 1, nil},
		{"upper-case subject adopted", "casey@social.example", "", "CASEY@social.example", "https://social.example/u/casey", 1, nil},
		{"subject names another handle that names itself", "bob@old.example", "", "bob@new.example", "https://new.example/u/bob", 2, nil},
		{"redirect to a handle naming a third", "carol@old.example", "", "", "", 2, fetch.ErrSubject},
		{"no ActivityPub self link", "nolink@social.example", "", "", "", 1, fetch.ErrNoActor},
		{"redirected answer without self link", "redirnoself@old.example", "", "", "", 2, fetch.ErrNoActor},
		{"subject of three parts refused by Resolve", "three@social.example", "", "", "", 1, fetch.ErrSubject},
		{"subject of three parts read by its first two in Confirm", "three@social.example", "https://social.example/u/three", "three@social.example", "https://social.example/u/three", 1, nil},
		{"redirected subject of three parts", "tothree@social.example", "", "", "", 2, fetch.ErrSubject},
		{"subject without acct: prefix", "bare@social.example", "", "bare@social.example", "https://social.example/u/bare", 1, nil},
		{"subject without user", "nouser@social.example", "", "", "", 1, fetch.ErrSubject},
		{"first of several self links", "lemmy@lemmy.example", "", "lemmy@lemmy.example", "https://lemmy.example/u/lemmy", 1, nil},
		{"410 gone", "gone@social.example", "", "", "", 1, fetch.ErrGone},
		{"410 on the redirected handle", "moved@social.example", "", "", "", 2, fetch.ErrGone},
		{"redirected host down", "dan@social.example", "", "", "", 2, fetch.ErrTemporary},
		{"not found", "nobody@social.example", "", "", "", 1, fetch.ErrNotFound},
		{"bad handle never asked", "nobody", "", "", "", 0, fetch.ErrInvalidAddress},
		{"confirm matching actor", "upper@social.example", "https://social.example/u/upper", "Upper@social.example", "https://social.example/u/upper", 1, nil},
		{"confirm another actor refused", "wrongactor@social.example", "https://social.example/u/wrongactor", "", "", 1, fetch.ErrActorMismatch},
		{"confirm through a redirect", "bob@old.example", "https://new.example/u/bob", "bob@new.example", "https://new.example/u/bob", 2, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := wf()
			var r *fetch.Resolved
			var err error
			if tc.confirm != "" || tc.err == fetch.ErrActorMismatch {
				r, err = fetch.ConfirmWith(context.Background(), w, tc.handle, tc.confirm)
			} else {
				r, err = fetch.ResolveWith(context.Background(), w, tc.handle)
			}
			if len(w.asked) != tc.asks {
				t.Errorf("asked %v, want %d queries", w.asked, tc.asks)
			}
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Handle.String() != tc.handleW || r.Actor != tc.actorW {
				t.Errorf("resolved %s -> %s, want %s -> %s", r.Handle, r.Actor, tc.handleW, tc.actorW)
			}
		})
	}
}

func TestFetcherResolveAndConfirm(t *testing.T) {
	t.Parallel()
	s := newSite(t, "mastodon.test")
	s.mux.HandleFunc("/.well-known/webfinger", func(w http.ResponseWriter, r *http.Request) {
		if !strings.EqualFold(r.URL.Query().Get("resource"), "acct:alice@"+s.host) {
			w.WriteHeader(404)
			return
		}
		w.Header().Set("Content-Type", "application/jrd+json")
		_, _ = w.Write([]byte(s.expand(hostExpand(s, mastodonJRD))))
	})
	f := newFetcher(t, nil)
	r, err := f.Resolve(context.Background(), "@ALICE@"+strings.ToUpper(s.host))
	if err != nil {
		t.Fatal(err)
	}
	if r.Handle.String() != "Alice@"+s.host || r.Actor != s.url("/users/Alice") || len(r.Actors) != 1 {
		t.Fatalf("resolved %+v", r)
	}
	if _, err := f.Confirm(context.Background(), "alice@"+s.host, s.url("/users/Alice")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Confirm(context.Background(), "alice@"+s.host, s.url("/users/mallory")); !errors.Is(err, fetch.ErrActorMismatch) {
		t.Fatalf("confirm mismatch: %v", err)
	}
}
