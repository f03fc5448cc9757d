package fetch_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/fetch"
)

// Documents in the shapes the servers publish, written for these tests.
const (
	mastodonNote = `{"@context":["https://www.w3.org/ns/activitystreams",{"sensitive":"as:sensitive"}],
"id":"{base}/users/alice/statuses/1","type":"Note","attributedTo":"{base}/users/alice",
"to":["https://www.w3.org/ns/activitystreams#Public"],"content":"<p>hi</p>","url":"{base}/@alice/1"}`
	mastodonActor = `{"@context":["https://www.w3.org/ns/activitystreams","https://w3id.org/security/v1"],
"id":"{base}/users/alice","type":"Person","preferredUsername":"alice","inbox":"{base}/users/alice/inbox",
"outbox":"{base}/users/alice/outbox","publicKey":{"id":"{base}/users/alice#main-key","owner":"{base}/users/alice","publicKeyPem":"-----BEGIN PUBLIC KEY-----"}}`
	lemmyPage = `{"@context":["https://join-lemmy.org/context.json","https://www.w3.org/ns/activitystreams"],
"type":"Page","id":"{base}/post/7","attributedTo":"{base}/u/bob","to":["{base}/c/rust","https://www.w3.org/ns/activitystreams#Public"],
"name":"A post","audience":"{base}/c/rust"}`
	gtsNote = `{"@context":"https://www.w3.org/ns/activitystreams","id":"{base}/users/carol/statuses/01HX","type":"Note",
"attributedTo":"{base}/users/carol","content":"hello","tag":[]}`
	misskeyNote = `{"@context":["https://www.w3.org/ns/activitystreams","https://w3id.org/security/v1",{"_misskey_content":"misskey:_misskey_content"}],
"id":"{base}/notes/9abc","type":"Note","attributedTo":"{base}/users/9xyz","content":"<p>yo</p>","_misskey_content":"yo"}`
)

func TestLookup(t *testing.T) {
	t.Parallel()
	mastodon := newSite(t, "mastodon.test")
	lemmy := newSite(t, "lemmy.test")
	gts := newSite(t, "gts.test")
	misskey := newSite(t, "misskey.test")
	other := newSite(t, "other.test")

	mastodon.ap("/users/alice/statuses/1", mastodonNote)
	mastodon.ap("/users/alice", mastodonActor)
	lemmy.serve("/post/7", 200, `application/ld+json; profile="https://www.w3.org/ns/activitystreams"`, lemmyPage)
	gts.serve("/users/carol/statuses/01HX", 200, "application/activity+json", gtsNote)
	misskey.serve("/notes/9abc", 200, "application/activity+json; charset=utf-8", misskeyNote)
	// Redirect to the canonical URL.
	mastodon.mux.Handle("/s/1", http.RedirectHandler(mastodon.url("/users/alice/statuses/1"), http.StatusFound))
	// Content types that are not ActivityPub.
	other.serve("/ldjson-no-profile", 200, "application/ld+json", `{"id":"{base}/ldjson-no-profile","type":"Note"}`)
	other.serve("/ldjson-other-profile", 200, `application/ld+json; profile="https://example.com/p"`, `{"id":"{base}/ldjson-other-profile","type":"Note"}`)
	other.serve("/plain-json", 200, "application/json", `{"id":"{base}/plain-json","type":"Note"}`)
	other.serve("/no-type", 200, "", `{"id":"{base}/no-type","type":"Note"}`)
	other.serve("/profile-list", 200, `application/ld+json; profile="https://example.com/x https://www.w3.org/ns/activitystreams"`, `{"id":"{base}/profile-list","type":"Note"}`)
	// Identity.
	other.ap("/claims-mastodon", strings.ReplaceAll(mastodonNote, "{base}", mastodon.base))
	other.ap("/claims-elsewhere", `{"id":"`+lemmy.base+`/post/404","type":"Note"}`)
	lemmy.ap("/post/404", `{"id":"`+lemmy.base+`/post/other","type":"Note"}`)
	other.ap("/no-id", `{"type":"Note","content":"x"}`)
	other.ap("/urn-id", `{"id":"urn:uuid:1","type":"Note"}`)
	other.ap("/not-object", `["a"]`)
	other.ap("/broken", `{"id":`)
	// Authors.
	other.ap("/author-elsewhere", `{"id":"{base}/author-elsewhere","type":"Note","attributedTo":"`+mastodon.base+`/users/alice"}`)
	other.ap("/actor-elsewhere", `{"id":"{base}/actor-elsewhere","type":"Create","actor":["{base}/u/a","`+mastodon.base+`/users/alice"]}`)
	other.ap("/author-object", `{"id":"{base}/author-object","type":"Note","attributedTo":[{"type":"Person","id":"{base}/u/a"}]}`)
	other.ap("/author-object-elsewhere", `{"id":"{base}/author-object-elsewhere","type":"Note","attributedTo":{"type":"Person","id":"`+lemmy.base+`/u/x"}}`)
	other.ap("/author-other-port", `{"id":"{base}/author-other-port","type":"Note","attributedTo":"http://other.test:1/u/a"}`)
	// Pages with alternates.
	mastodon.mux.HandleFunc("/@alice/1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Add("Link", `<`+mastodon.url("/users/alice/statuses/1")+`>; rel="alternate"; type="application/activity+json"`)
		_, _ = w.Write([]byte("<html><body>page</body></html>"))
	})
	misskey.serve("/notes/9abc/page", 200, "text/html", `<!DOCTYPE html><html><head><title>x</title>
<LINK REL="Alternate" TYPE="application/activity+json" HREF="/notes/9abc"></head><body></body></html>`)
	other.serve("/page-to-page", 200, "text/html", `<html><head><link rel="alternate" type="application/activity+json" href="/page-again"></head></html>`)
	other.serve("/page-again", 200, "text/html", `<html><head><link rel="alternate" type="application/activity+json" href="/page-to-page"></head></html>`)
	other.serve("/page-without", 200, "text/html", `<html><head><link rel="alternate" type="application/rss+xml" href="/feed"></head></html>`)
	// Statuses.
	other.serve("/missing", 404, "text/plain", "no")
	other.serve("/gone", 410, "text/plain", "gone")
	other.mux.HandleFunc("/busy", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(503)
	})
	other.serve("/forbidden", 403, "text/plain", "no")
	other.serve("/accepted", 202, "application/activity+json", `{"id":"{base}/accepted"}`)
	other.ap("/huge", `{"id":"{base}/huge","content":"`+strings.Repeat("x", 2<<20)+`"}`)

	f := newFetcher(t, nil)
	tests := []struct {
		name     string
		url      string
		wantID   string
		wantURL  string
		wantType string
		err      error
	}{
		{"mastodon note", mastodon.url("/users/alice/statuses/1"), mastodon.url("/users/alice/statuses/1"), "", "Note", nil},
		{"mastodon actor", mastodon.url("/users/alice"), mastodon.url("/users/alice"), "", "Person", nil},
		{"lemmy page as ld+json with profile", lemmy.url("/post/7"), lemmy.url("/post/7"), "", "Page", nil},
		{"gotosocial note", gts.url("/users/carol/statuses/01HX"), gts.url("/users/carol/statuses/01HX"), "", "Note", nil},
		{"misskey note with charset", misskey.url("/notes/9abc"), misskey.url("/notes/9abc"), "", "Note", nil},
		{"redirect returns final URL", mastodon.url("/s/1"), mastodon.url("/users/alice/statuses/1"), mastodon.url("/users/alice/statuses/1"), "Note", nil},
		{"ld+json without profile refused", other.url("/ldjson-no-profile"), "", "", "", fetch.ErrContentType},
		{"ld+json with another profile refused", other.url("/ldjson-other-profile"), "", "", "", fetch.ErrContentType},
		{"ld+json profile list containing AS", other.url("/profile-list"), other.url("/profile-list"), "", "Note", nil},
		{"plain JSON never", other.url("/plain-json"), "", "", "", fetch.ErrContentType},
		{"missing content type", other.url("/no-type"), "", "", "", fetch.ErrContentType},
		{"id on another origin fetched from its owner", other.url("/claims-mastodon"), mastodon.url("/users/alice/statuses/1"), mastodon.url("/users/alice/statuses/1"), "Note", nil},
		{"second disagreement refused", other.url("/claims-elsewhere"), "", "", "", fetch.ErrIDMismatch},
		{"no id refused", other.url("/no-id"), "", "", "", fetch.ErrIDMismatch},
		{"non-http id refused", other.url("/urn-id"), "", "", "", fetch.ErrIDMismatch},
		{"JSON array refused", other.url("/not-object"), "", "", "", fetch.ErrMalformed},
		{"broken JSON refused", other.url("/broken"), "", "", "", fetch.ErrMalformed},
		{"attributedTo on another origin", other.url("/author-elsewhere"), "", "", "", fetch.ErrAuthorOrigin},
		{"actor array with another origin", other.url("/actor-elsewhere"), "", "", "", fetch.ErrAuthorOrigin},
		{"author as embedded object on same origin", other.url("/author-object"), other.url("/author-object"), "", "Note", nil},
		{"author as embedded object elsewhere", other.url("/author-object-elsewhere"), "", "", "", fetch.ErrAuthorOrigin},
		{"author on another port", other.url("/author-other-port"), "", "", "", fetch.ErrAuthorOrigin},
		{"mastodon page with Link header alternate", mastodon.url("/@alice/1"), mastodon.url("/users/alice/statuses/1"), mastodon.url("/users/alice/statuses/1"), "Note", nil},
		{"misskey page with HTML alternate, case-insensitive", misskey.url("/notes/9abc/page"), misskey.url("/notes/9abc"), "", "Note", nil},
		{"alternate followed once only", other.url("/page-to-page"), "", "", "", fetch.ErrContentType},
		{"page without ActivityPub alternate", other.url("/page-without"), "", "", "", fetch.ErrContentType},
		{"404 is not found", other.url("/missing"), "", "", "", fetch.ErrNotFound},
		{"410 is gone", other.url("/gone"), "", "", "", fetch.ErrGone},
		{"503 is temporary", other.url("/busy"), "", "", "", fetch.ErrTemporary},
		{"202 is not a document", other.url("/accepted"), "", "", "", &fetch.StatusError{}},
		{"over 1 MiB", other.url("/huge"), "", "", "", client.ErrTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := f.Lookup(context.Background(), tc.url)
			if tc.err != nil {
				var se *fetch.StatusError
				if _, isStatus := tc.err.(*fetch.StatusError); isStatus {
					if !errors.As(err, &se) {
						t.Fatalf("Lookup = %v, want a *StatusError", err)
					}
					return
				}
				if !errors.Is(err, tc.err) {
					t.Fatalf("Lookup = %v, %v; want %v", d, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Lookup: %v", err)
			}
			if d.ID != tc.wantID || d.Type != tc.wantType {
				t.Errorf("ID, Type = %q, %q; want %q, %q", d.ID, d.Type, tc.wantID, tc.wantType)
			}
			wantURL := tc.wantURL
			if wantURL == "" {
				wantURL = tc.wantID
			}
			if d.URL.String() != wantURL {
				t.Errorf("URL = %s, want %s", d.URL, wantURL)
			}
		})
	}
}

func TestLookupStatusErrorDetails(t *testing.T) {
	t.Parallel()
	s := newSite(t, "busy.test")
	s.mux.HandleFunc("/x", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(429)
	})
	s.serve("/forbidden", 403, "", "")
	f := newFetcher(t, nil)
	_, err := f.Lookup(context.Background(), s.url("/x"))
	var se *fetch.StatusError
	if !errors.As(err, &se) || se.StatusCode != 429 || se.RetryAfter.Seconds() != 120 || !errors.Is(err, fetch.ErrTemporary) {
		t.Fatalf("err = %#v", err)
	}
	_, err = f.Lookup(context.Background(), s.url("/forbidden"))
	if !errors.As(err, &se) || se.StatusCode != 403 || errors.Is(err, fetch.ErrTemporary) || errors.Is(err, fetch.ErrNotFound) {
		t.Fatalf("403 err = %v", err)
	}
}

func TestLookupRefetchFromIDCountsOnce(t *testing.T) {
	t.Parallel()
	owner := newSite(t, "owner.test")
	liar := newSite(t, "liar.test")
	owner.ap("/notes/1", `{"id":"{base}/notes/1","type":"Note","content":"real","attributedTo":"{base}/u/a"}`)
	liar.ap("/copy", `{"id":"`+owner.base+`/notes/1","type":"Note","content":"forged","attributedTo":"`+owner.base+`/u/a"}`)
	f := newFetcher(t, nil)
	d, err := f.Lookup(context.Background(), liar.url("/copy"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(d.Raw), "real") || strings.Contains(string(d.Raw), "forged") {
		t.Fatalf("trusted the claim instead of the owner: %s", d.Raw)
	}
	if owner.hits.Load() != 1 {
		t.Fatalf("owner asked %d times", owner.hits.Load())
	}
}

type note struct {
	ID           string `json:"id"`
	Type         string `json:"type"`
	AttributedTo string `json:"attributedTo"`
	Content      string `json:"content"`
}

func TestLookupAs(t *testing.T) {
	t.Parallel()
	s := newSite(t, "mastodon.test")
	s.ap("/users/alice/statuses/1", mastodonNote)
	s.ap("/bad-shape", `{"id":"{base}/bad-shape","content":7}`)
	f := newFetcher(t, nil)
	n, d, err := fetch.LookupAs[note](context.Background(), f, s.url("/users/alice/statuses/1"))
	if err != nil {
		t.Fatal(err)
	}
	if n.Content != "<p>hi</p>" || n.AttributedTo != s.url("/users/alice") || d.ID != n.ID {
		t.Fatalf("decoded %+v", n)
	}
	if _, _, err := fetch.LookupAs[note](context.Background(), f, s.url("/bad-shape")); !errors.Is(err, fetch.ErrMalformed) {
		t.Fatalf("bad shape: %v", err)
	}
	if _, _, err := fetch.LookupAs[note](context.Background(), f, s.url("/missing")); !errors.Is(err, fetch.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
}

func TestIsActivityPub(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ct   string
		want bool
	}{
		{"application/activity+json", true},
		{"Application/Activity+JSON; charset=utf-8", true},
		{`application/ld+json; profile="https://www.w3.org/ns/activitystreams"`, true},
		{`application/ld+json;profile="https://www.w3.org/ns/activitystreams"`, true},
		{`application/ld+json; profile="a https://www.w3.org/ns/activitystreams b"`, true},
		{`application/ld+json; profile=https://www.w3.org/ns/activitystreams`, false}, // unquoted '/' is not a token
		{`application/ld+json; profile="https://www.w3.org/ns/activitystreams/"`, false},
		{"application/ld+json", false},
		{"application/json", false},
		{"text/html", false},
		{"", false},
		{"garbage;;", false},
	}
	for _, tc := range tests {
		t.Run(tc.ct, func(t *testing.T) {
			if got := fetch.IsActivityPub(tc.ct); got != tc.want {
				t.Errorf("IsActivityPub(%q) = %v", tc.ct, got)
			}
		})
	}
}

func TestBudget(t *testing.T) {
	t.Parallel()
	owner := newSite(t, "owner.test")
	other := newSite(t, "other.test")
	owner.ap("/n", `{"id":"{base}/n","type":"Note"}`)
	other.ap("/claim", `{"id":"`+owner.base+`/n","type":"Note"}`)
	f := newFetcher(t, nil)

	t.Run("exhausted before any request", func(t *testing.T) {
		b := fetch.NewBudget(1)
		ctx := fetch.WithBudget(context.Background(), b)
		if _, err := f.Lookup(ctx, owner.url("/n")); err != nil {
			t.Fatal(err)
		}
		if b.Remaining() != 0 {
			t.Fatalf("remaining %d", b.Remaining())
		}
		before := owner.hits.Load()
		if _, err := f.Lookup(ctx, owner.url("/n")); !errors.Is(err, fetch.ErrBudgetExhausted) {
			t.Fatalf("err = %v", err)
		}
		if owner.hits.Load() != before {
			t.Fatal("a request was sent past the budget")
		}
	})
	t.Run("refetch from id spends too", func(t *testing.T) {
		ctx := fetch.WithBudget(context.Background(), fetch.NewBudget(1))
		if _, err := f.Lookup(ctx, other.url("/claim")); !errors.Is(err, fetch.ErrBudgetExhausted) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("no budget, no limit", func(t *testing.T) {
		if fetch.BudgetFrom(context.Background()) != nil {
			t.Fatal("budget from nowhere")
		}
		for range 3 {
			if _, err := f.Lookup(context.Background(), owner.url("/n")); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	if _, err := fetch.New(nil, nil); err == nil {
		t.Error("nil client accepted")
	}
	if _, err := fetch.New(newClient(t), &fetch.Config{FirstScheme: 9}); err == nil {
		t.Error("unknown scheme accepted")
	}
}

// A Retry-After date is measured from the Fetcher's clock, so the wait is
// exact under an injected clock.
func TestLookupRetryAfterDateUsesClock(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	s := newSite(t, "busydate.test")
	s.mux.HandleFunc("/x", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", now.Add(90*time.Second).Format(http.TimeFormat))
		w.WriteHeader(503)
	})
	f := newFetcher(t, &fetch.Config{Now: func() time.Time { return now }})
	_, err := f.Lookup(context.Background(), s.url("/x"))
	var se *fetch.StatusError
	if !errors.As(err, &se) || se.RetryAfter != 90*time.Second {
		t.Fatalf("err = %#v", err)
	}
}

// TestLookupCaseVariantKeys: encoding/json matches struct fields without
// regard to case, while JSON-LD and any map reader take "id" exactly. A
// document from evil.test carrying "id" of another server beside "ID" of
// its own (or an author, or a walked item, shaped so) must not pass as its
// own: the keys are ambiguous, and the document is refused as malformed.
func TestLookupCaseVariantKeys(t *testing.T) {
	t.Parallel()
	evil := newSite(t, "evil.test")
	victim := newSite(t, "victim.test")
	victim.ap("/users/bob/statuses/1", `{"id":"{base}/users/bob/statuses/1","type":"Note","attributedTo":"{base}/users/bob"}`)
	evil.ap("/id-twice", `{"id":"`+victim.base+`/users/bob/statuses/1","ID":"{base}/id-twice","type":"Note","attributedTo":"{base}/u/e"}`)
	evil.ap("/id-escaped", `{"id":"`+victim.base+`/users/bob/statuses/1","\u0049d":"{base}/id-escaped","type":"Note"}`)
	evil.ap("/items-long-s", `{"id":"{base}/items-long-s","type":"Collection","items":[],"itemſ":["`+victim.base+`/x"]}`)
	evil.ap("/author-twice", `{"id":"{base}/author-twice","type":"Note","attributedTo":{"id":"`+victim.base+`/users/bob","ID":"{base}/u/e"}}`)
	evil.ap("/actor-case", `{"id":"{base}/actor-case","type":"Create","Actor":"`+victim.base+`/users/bob","actor":"{base}/u/e"}`)
	evil.ap("/plain", `{"id":"{base}/plain","type":"Note","name":"ID","summary":"\"Id\"","attributedTo":{"id":"{base}/u/e","type":"Person","name":"Actor"}}`)
	f := newFetcher(t, nil)
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"/id-twice", false},
		{"/id-escaped", false},
		{"/items-long-s", false},
		{"/author-twice", false},
		{"/actor-case", false},
		{"/plain", true},
	} {
		t.Run(tc.path, func(t *testing.T) {
			d, err := f.Lookup(context.Background(), evil.url(tc.path))
			if tc.ok {
				if err != nil {
					t.Fatalf("Lookup: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Lookup accepted %s as %s", tc.path, d.ID)
			}
		})
	}
}

func TestRefetch(t *testing.T) {
	t.Parallel()
	s := newSite(t, "origin.test")
	s.ap("/act/1", `{"id":"{base}/act/1","type":"Create","actor":"{base}/users/a"}`)
	s.ap("/act/2", `{"id":"{base}/act/other","type":"Create","actor":"{base}/users/a"}`)
	s.ap("/act/other", `{"id":"{base}/act/other","type":"Create","actor":"{base}/users/a"}`)
	s.serve("/page", 200, "text/html", `<link rel="alternate" type="application/activity+json" href="{base}/act/1">`)
	f := newFetcher(t, nil)
	ctx := context.Background()
	if b, err := f.Refetch(ctx, s.url("/act/1")); err != nil || !strings.Contains(string(b), `"Create"`) {
		t.Fatalf("Refetch = %s, %v", b, err)
	}
	if _, err := f.Refetch(ctx, s.url("/act/2")); !errors.Is(err, fetch.ErrIDMismatch) {
		t.Fatalf("a document with another id: %v; want ErrIDMismatch", err)
	}
	if _, err := f.Refetch(ctx, s.url("/page")); !errors.Is(err, fetch.ErrContentType) {
		t.Fatalf("a web page: %v; want ErrContentType (no alternate discovery)", err)
	}
}
