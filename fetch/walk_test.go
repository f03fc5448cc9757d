package fetch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/fetch"
)

// pagedOutbox serves a Mastodon-style outbox: an OrderedCollection whose
// first is an IRI, then pages of per items linked by next (?page=N).
func pagedOutbox(t testing.TB, s *site, path string, pages, per int) {
	t.Helper()
	coll := s.expand(fmt.Sprintf(`{"@context":"https://www.w3.org/ns/activitystreams","id":"{base}%s","type":"OrderedCollection","totalItems":%d,"first":"{base}%s?page=1"}`,
		path, pages*per, path))
	pageBodies := map[string]string{}
	for p := 1; p <= pages; p++ {
		var items []string
		for i := 0; i < per; i++ {
			items = append(items, fmt.Sprintf(`"{base}/items/%d"`, (p-1)*per+i))
		}
		next := ""
		if p < pages {
			next = fmt.Sprintf(`,"next":"{base}%s?page=%d"`, path, p+1)
		}
		pageBodies[fmt.Sprint(p)] = s.expand(fmt.Sprintf(`{"id":"{base}%s?page=%d","type":"OrderedCollectionPage","partOf":"{base}%s","orderedItems":[%s]%s}`,
			path, p, path, strings.Join(items, ","), next))
	}
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/activity+json")
		if p := r.URL.Query().Get("page"); p != "" {
			b, ok := pageBodies[p]
			if !ok {
				w.WriteHeader(404)
				return
			}
			_, _ = w.Write([]byte(b))
			return
		}
		_, _ = w.Write([]byte(coll))
	})
}

func collect(t *testing.T, w *fetch.Walk) ([]fetch.Item, error) {
	t.Helper()
	var out []fetch.Item
	for {
		it, err := w.Next(context.Background())
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		out = append(out, it)
	}
}

func TestWalk(t *testing.T) {
	t.Parallel()
	s := newSite(t, "mastodon.test")
	elsewhere := newSite(t, "elsewhere.test")
	samehost := newSite(t, "mastodon.test") // same host, another port
	pagedOutbox(t, s, "/users/alice/outbox", 3, 4)
	// Lemmy: an outbox without first holds its items itself.
	s.ap("/c/rust/outbox", `{"type":"OrderedCollection","id":"{base}/c/rust/outbox","totalItems":2,
"orderedItems":[{"type":"Announce","id":"{base}/activities/announce/1","actor":"{base}/c/rust"},{"type":"Announce","id":"`+elsewhere.base+`/activities/2"}]}`)
	s.ap("/empty", `{"type":"OrderedCollection","id":"{base}/empty","totalItems":0,"orderedItems":[]}`)
	s.ap("/no-items", `{"type":"Collection","id":"{base}/no-items","totalItems":0}`)
	// GoToSocial-style: first embedded in the collection, next as IRI.
	s.ap("/gts/followers", `{"id":"{base}/gts/followers","type":"OrderedCollection","first":{"id":"{base}/gts/followers?page=1","type":"OrderedCollectionPage","orderedItems":["{base}/u/1","{base}/u/2"],"next":"{base}/gts/followers/p2"}}`)
	s.ap("/gts/followers/p2", `{"id":"{base}/gts/followers/p2","type":"OrderedCollectionPage","orderedItems":["{base}/u/3"]}`)
	// Misskey-style: unordered Collection with items and first.
	s.ap("/misskey/following", `{"id":"{base}/misskey/following","type":"Collection","items":["{base}/u/a"],"first":"{base}/misskey/following/p1"}`)
	s.ap("/misskey/following/p1", `{"id":"{base}/misskey/following/p1","type":"CollectionPage","items":["{base}/u/b","{base}/u/c"]}`)
	// Broken walks.
	s.ap("/cross", `{"id":"{base}/cross","type":"OrderedCollection","first":"`+elsewhere.base+`/page"}`)
	elsewhere.ap("/page", `{"id":"{base}/page","type":"OrderedCollectionPage","orderedItems":["x"]}`)
	s.ap("/cross-embedded", `{"id":"{base}/cross-embedded","type":"OrderedCollection","first":{"id":"`+elsewhere.base+`/page","type":"OrderedCollectionPage","orderedItems":["x"]}}`)
	s.ap("/other-port", `{"id":"{base}/other-port","type":"OrderedCollection","first":"`+samehost.base+`/page"}`)
	samehost.ap("/page", `{"id":"{base}/page","type":"OrderedCollectionPage","orderedItems":["{base}/u/1"]}`)
	s.ap("/loop", `{"id":"{base}/loop","type":"OrderedCollection","first":"{base}/loop/1"}`)
	s.ap("/loop/1", `{"id":"{base}/loop/1","type":"OrderedCollectionPage","orderedItems":["a"],"next":"{base}/loop/2"}`)
	s.ap("/loop/2", `{"id":"{base}/loop/2","type":"OrderedCollectionPage","orderedItems":["b"],"next":"{base}/loop/1"}`)
	s.ap("/page-claims-elsewhere", `{"id":"{base}/page-claims-elsewhere","type":"OrderedCollection","first":"{base}/pce/1"}`)
	s.ap("/pce/1", `{"id":"`+elsewhere.base+`/pce/1","type":"OrderedCollectionPage","orderedItems":["a"]}`)
	elsewhere.ap("/pce/1", `{"id":"{base}/pce/1","type":"OrderedCollectionPage","orderedItems":["a"]}`)
	s.ap("/empty-pages", `{"id":"{base}/empty-pages","type":"OrderedCollection","first":"{base}/ep/1"}`)
	s.ap("/ep/1", `{"id":"{base}/ep/1","type":"OrderedCollectionPage","orderedItems":[],"next":"{base}/ep/2"}`)
	s.ap("/ep/2", `{"id":"{base}/ep/2","type":"OrderedCollectionPage","orderedItems":["{base}/u/z"]}`)
	// An embedded page repeating a page already read ends the walk.
	s.ap("/embedded-loop", `{"id":"{base}/embedded-loop","type":"OrderedCollection","first":"{base}/el/1"}`)
	s.ap("/el/1", `{"id":"{base}/el/1","type":"OrderedCollectionPage","orderedItems":["a"],"next":{"id":"{base}/el/1","type":"OrderedCollectionPage","orderedItems":["dup"]}}`)
	s.ap("/single-item", `{"id":"{base}/single-item","type":"Collection","items":"{base}/u/only"}`)

	f := newFetcher(t, nil)
	iri := func(p string) string { return s.url(p) }
	tests := []struct {
		name   string
		url    string
		lim    fetch.WalkLimits
		items  []string // IRIs, or "obj:<id>" / "claim:<id>" for embedded objects
		pages  int
		err    error
		noHits *site // a site that must not be asked
	}{
		{"mastodon outbox pages via first and next", iri("/users/alice/outbox"), fetch.WalkLimits{}, nil, 3, nil, nil},
		{"lemmy outbox without first is its only page", iri("/c/rust/outbox"), fetch.WalkLimits{},
			[]string{"obj:" + iri("/activities/announce/1"), "claim:" + elsewhere.url("/activities/2")}, 1, nil, nil},
		{"empty collection without first", iri("/empty"), fetch.WalkLimits{}, []string{}, 1, nil, nil},
		{"collection without items or first", iri("/no-items"), fetch.WalkLimits{}, []string{}, 1, nil, nil},
		{"embedded first page read without a request", iri("/gts/followers"), fetch.WalkLimits{},
			[]string{iri("/u/1"), iri("/u/2"), iri("/u/3")}, 2, nil, nil},
		{"collection with first and items is a page too", iri("/misskey/following"), fetch.WalkLimits{},
			[]string{iri("/u/a"), iri("/u/b"), iri("/u/c")}, 2, nil, nil},
		{"page on another origin refused unfetched", iri("/cross"), fetch.WalkLimits{}, []string{}, 0, fetch.ErrCrossOriginPage, elsewhere},
		{"embedded page with another origin's id refused", iri("/cross-embedded"), fetch.WalkLimits{}, []string{}, 0, fetch.ErrCrossOriginPage, elsewhere},
		{"page on another port refused by origin", iri("/other-port"), fetch.WalkLimits{}, []string{}, 0, fetch.ErrCrossOriginPage, samehost},
		{"page on another port taken by host", iri("/other-port"), fetch.WalkLimits{ByHost: true}, []string{samehost.url("/u/1")}, 1, nil, nil},
		{"page seen before ends the walk", iri("/loop"), fetch.WalkLimits{}, []string{"a", "b"}, 2, nil, nil},
		{"embedded page seen before ends the walk", iri("/embedded-loop"), fetch.WalkLimits{}, []string{"a"}, 1, nil, nil},
		{"page whose id is elsewhere refused", iri("/page-claims-elsewhere"), fetch.WalkLimits{}, []string{}, 0, fetch.ErrCrossOriginPage, nil},
		{"empty page leads on", iri("/empty-pages"), fetch.WalkLimits{}, []string{iri("/u/z")}, 2, nil, nil},
		{"single item not in an array", iri("/single-item"), fetch.WalkLimits{}, []string{iri("/u/only")}, 1, nil, nil},
		{"page limit", iri("/users/alice/outbox"), fetch.WalkLimits{Pages: 2}, nil, 2, fetch.ErrWalkLimit, nil},
		{"item limit ends mid-page", iri("/users/alice/outbox"), fetch.WalkLimits{Items: 5}, nil, 2, fetch.ErrWalkLimit, nil},
		{"item limit at the very end is no error", iri("/users/alice/outbox"), fetch.WalkLimits{Items: 12}, nil, 3, nil, nil},
		{"collection not found", iri("/nope"), fetch.WalkLimits{}, []string{}, 0, fetch.ErrNotFound, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := int64(0)
			if tc.noHits != nil {
				before = tc.noHits.hits.Load()
			}
			w := f.Walk(tc.url, tc.lim)
			got, err := collect(t, w)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("walk error = %v, want %v", err, tc.err)
				}
			} else if err != nil {
				t.Fatalf("walk: %v", err)
			}
			if tc.items != nil {
				if names := itemNames(got); names != strings.Join(tc.items, " ") {
					t.Errorf("items = %q, want %q", names, tc.items)
				}
			}
			if w.Pages() != tc.pages {
				t.Errorf("pages = %d, want %d", w.Pages(), tc.pages)
			}
			if tc.noHits != nil && tc.noHits.hits.Load() != before {
				t.Errorf("%s was asked", tc.noHits.host)
			}
		})
	}
	t.Run("item counts and order of a paged outbox", func(t *testing.T) {
		got, err := collect(t, f.Walk(iri("/users/alice/outbox"), fetch.WalkLimits{Items: 5}))
		if !errors.Is(err, fetch.ErrWalkLimit) || len(got) != 5 || got[4].IRI != iri("/items/4") {
			t.Fatalf("got %d items, %v", len(got), err)
		}
		if !strings.Contains(err.Error(), "5 items") {
			t.Fatalf("limit error %v does not say how far the walk got", err)
		}
	})
}

func TestWalkNextPage(t *testing.T) {
	t.Parallel()
	s := newSite(t, "mastodon.test")
	pagedOutbox(t, s, "/outbox", 4, 3)
	f := newFetcher(t, nil)
	w := f.Walk(s.url("/outbox"), fetch.WalkLimits{Items: 4})
	var sizes []int
	var err error
	for {
		var page []fetch.Item
		page, err = w.NextPage(context.Background())
		if err != nil {
			break
		}
		sizes = append(sizes, len(page))
	}
	// The item limit ends the walk at the end of the page reaching it.
	if fmt.Sprint(sizes) != "[3 3]" || !errors.Is(err, fetch.ErrWalkLimit) || w.Items() != 6 {
		t.Fatalf("pages %v, items %d, err %v", sizes, w.Items(), err)
	}
	// The end stays the end.
	if _, err := w.NextPage(context.Background()); !errors.Is(err, fetch.ErrWalkLimit) {
		t.Fatalf("after end: %v", err)
	}

	w = f.Walk(s.url("/outbox"), fetch.WalkLimits{})
	if _, err := w.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	rest, err := w.NextPage(context.Background())
	if err != nil || len(rest) != 2 {
		t.Fatalf("rest of a started page: %d, %v", len(rest), err)
	}
	n := 0
	for _, err := range w.All(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 9 {
		t.Fatalf("All gave %d more items, want 9", n)
	}
}

func TestWalkEmbedded(t *testing.T) {
	t.Parallel()
	s := newSite(t, "mastodon.test")
	elsewhere := newSite(t, "elsewhere.test")
	s.ap("/replies/p2", `{"id":"{base}/replies/p2","type":"CollectionPage","items":["{base}/r/3"]}`)
	s.ap("/replies", `{"id":"{base}/replies","type":"Collection","first":{"type":"CollectionPage","items":["{base}/r/9"]}}`)
	elsewhere.ap("/replies", `{"id":"{base}/replies","type":"Collection","first":{"type":"CollectionPage","items":["{base}/r/1"]}}`)
	post := s.url("/users/alice/statuses/1")
	f := newFetcher(t, nil)
	tests := []struct {
		name  string
		coll  string
		items []string
		err   error
	}{
		{"embedded collection with embedded first page, next on embedder",
			`{"id":"` + elsewhere.url("/claimed") + `","type":"Collection","first":{"type":"CollectionPage","next":"` + s.url("/replies/p2") + `","items":["` + s.url("/r/1") + `",{"id":"` + s.url("/r/2") + `","type":"Note"},{"id":"` + elsewhere.url("/r/x") + `","type":"Note"}]}}`,
			[]string{s.url("/r/1"), "obj:" + s.url("/r/2"), "claim:" + elsewhere.url("/r/x"), s.url("/r/3")}, nil},
		{"page off the embedder's origin",
			`{"type":"Collection","first":"` + elsewhere.url("/replies") + `"}`, nil, fetch.ErrCrossOriginPage},
		{"collection IRI on embedder fetched", `"` + s.url("/replies") + `"`, []string{s.url("/r/9")}, nil},
		{"collection IRI off embedder refused", `"` + elsewhere.url("/replies") + `"`, nil, fetch.ErrCrossOriginPage},
		{"null collection is empty", `null`, []string{}, nil},
		{"absent collection is empty", ``, []string{}, nil},
		{"non-object collection malformed", `42`, nil, fetch.ErrMalformed},
		{"embedded page that is not an object malformed", `{"type":"Collection","first":[1]}`, nil, fetch.ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := collect(t, f.WalkEmbedded(post, json.RawMessage(tc.coll), fetch.WalkLimits{}))
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if tc.items == nil {
				return
			}
			if names := itemNames(got); names != strings.Join(tc.items, " ") {
				t.Errorf("items = %q, want %q", names, tc.items)
			}
		})
	}
}

// itemNames renders walked items for comparison: an IRI as itself, an
// embedded object as obj:<id>, a cross-origin one as claim:<id>.
func itemNames(items []fetch.Item) string {
	var names []string
	for _, it := range items {
		switch {
		case it.IRI != "":
			names = append(names, it.IRI)
		case it.Claim:
			names = append(names, "claim:"+it.ID)
		default:
			names = append(names, "obj:"+it.ID)
		}
	}
	return strings.Join(names, " ")
}

// writeFreelyCollection serves a collection as WriteFreely 0.15 does
// (delivery-and-fetch.md section 11): an OrderedCollection with totalItems
// and first, then pages ?page=N that each carry totalItems and a next, also
// past the end. Pages past the end hold an empty orderedItems; with
// listItems false (its followers) no page lists items at all, only
// totalItems. total < 0 leaves totalItems out everywhere (a hostile server).
func writeFreelyCollection(t testing.TB, s *site, path string, total, per int, listItems bool) {
	t.Helper()
	totalField := ""
	if total >= 0 {
		totalField = fmt.Sprintf(`"totalItems":%d,`, total)
	}
	coll := s.expand(fmt.Sprintf(`{"@context":"https://www.w3.org/ns/activitystreams","id":"{base}%s","type":"OrderedCollection",%s"first":"{base}%s?page=1"}`,
		path, totalField, path))
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/activity+json")
		ps := r.URL.Query().Get("page")
		if ps == "" {
			_, _ = w.Write([]byte(coll))
			return
		}
		var p int
		if _, err := fmt.Sscan(ps, &p); err != nil || p < 1 {
			w.WriteHeader(404)
			return
		}
		itemsField := ""
		if listItems {
			var items []string
			for i := (p - 1) * per; i < p*per && i < total; i++ {
				items = append(items, fmt.Sprintf(`{"type":"Create","id":"{base}/p/%d","actor":"{base}/api/collections/blog"}`, i))
			}
			itemsField = `,"orderedItems":[` + strings.Join(items, ",") + `]`
		}
		_, _ = w.Write([]byte(s.expand(fmt.Sprintf(`{"@context":"https://www.w3.org/ns/activitystreams","id":"{base}%s?page=%d","type":"OrderedCollectionPage",%s"next":"{base}%s?page=%d","partOf":"{base}%s"%s}`,
			path, p, totalField, path, p+1, path, itemsField))))
	})
}

// TestWalkEndsOnEmptyPages: a walk of a server that links a next page past
// the end (WriteFreely, or a hostile server on purpose) ends at the first
// empty page once the collection's totalItems have been read, and after a
// run of WalkLimits.EmptyPages consecutive empty pages regardless.
func TestWalkEndsOnEmptyPages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		total    int // -1: no totalItems
		per      int
		list     bool
		lim      fetch.WalkLimits
		items    int
		pages    int
		requests int64
	}{
		{"writefreely outbox of one post", 1, 10, true, fetch.WalkLimits{}, 1, 2, 3},
		{"writefreely outbox of two full pages", 20, 10, true, fetch.WalkLimits{}, 20, 3, 4},
		{"writefreely outbox ending mid-page", 15, 10, true, fetch.WalkLimits{}, 15, 3, 4},
		{"writefreely empty outbox", 0, 10, true, fetch.WalkLimits{}, 0, 1, 2},
		{"writefreely followers list no items", 5, 10, false, fetch.WalkLimits{}, 0, fetch.WalkEmptyPagesDefault, fetch.WalkEmptyPagesDefault + 1},
		{"endless empty pages without totalItems", -1, 10, false, fetch.WalkLimits{}, 0, fetch.WalkEmptyPagesDefault, fetch.WalkEmptyPagesDefault + 1},
		{"totalItems lying high", 1000, 10, false, fetch.WalkLimits{}, 0, fetch.WalkEmptyPagesDefault, fetch.WalkEmptyPagesDefault + 1},
		{"run of empty pages configured", 5, 10, false, fetch.WalkLimits{EmptyPages: 1}, 0, 1, 2},
		{"page limit still applies first", 1000, 1, true, fetch.WalkLimits{Pages: 4}, 4, 4, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSite(t, "writefreely.test")
			writeFreelyCollection(t, s, "/api/collections/blog/outbox", tc.total, tc.per, tc.list)
			f := newFetcher(t, nil)
			w := f.Walk(s.url("/api/collections/blog/outbox"), tc.lim)
			got, err := collect(t, w)
			if tc.lim.Pages != 0 {
				if !errors.Is(err, fetch.ErrWalkLimit) {
					t.Fatalf("walk error = %v, want ErrWalkLimit", err)
				}
			} else if err != nil {
				t.Fatalf("walk: %v", err)
			}
			if len(got) != tc.items || w.Pages() != tc.pages || s.hits.Load() != tc.requests {
				t.Errorf("items %d, pages %d, requests %d; want %d, %d, %d", len(got), w.Pages(), s.hits.Load(), tc.items, tc.pages, tc.requests)
			}
		})
	}
}

// TestWalkAmbiguousItemIDIsClaim: an embedded item whose "id" is another
// server's, with an "ID" of the collection's own beside it, is a claim to
// look up, never an object the collection vouches for.
func TestWalkAmbiguousItemIDIsClaim(t *testing.T) {
	t.Parallel()
	s := newSite(t, "mastodon.test")
	victim := newSite(t, "victim.test")
	s.ap("/outbox", `{"id":"{base}/outbox","type":"OrderedCollection","orderedItems":[`+
		`{"id":"`+victim.base+`/notes/1","ID":"{base}/notes/1","type":"Note"},{"id":"{base}/notes/2","type":"Note","name":"ID"}]}`)
	got, err := collect(t, newFetcher(t, nil).Walk(s.url("/outbox"), fetch.WalkLimits{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[0].Claim || got[1].Claim || got[1].ID != s.url("/notes/2") {
		t.Fatalf("items %+v, want the ambiguous one a claim and the plain one not", got)
	}
}
