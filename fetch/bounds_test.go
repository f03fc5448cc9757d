package fetch_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/fetch"
)

func TestLookupBounds(t *testing.T) {
	t.Parallel()
	s := newSite(t, "big.test")
	s.ap("/n", `{"id":"{base}/n","type":"Note"}`)
	// A page far over the HTML bound, its alternate near the top.
	s.serve("/big-page", 200, "text/html", `<html><head><link rel="alternate" type="application/activity+json" href="/n"></head><body>`+strings.Repeat("<p>x</p>", 300_000)+`</body></html>`)
	// The alternate past the bound is not seen.
	s.serve("/late-alternate", 200, "text/html", `<html><body>`+strings.Repeat("<p>x</p>", 200_000)+`<link rel="alternate" type="application/activity+json" href="/n"></body></html>`)
	// A document streamed without Content-Length past the document bound.
	s.mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/activity+json")
		fl := w.(http.Flusher)
		_, _ = w.Write([]byte(`{"id":"` + s.url("/chunked") + `","content":"`))
		for range 40 {
			_, _ = w.Write([]byte(strings.Repeat("y", 32<<10)))
			fl.Flush()
		}
		_, _ = w.Write([]byte(`"}`))
	})
	f := newFetcher(t, &fetch.Config{MaxHTMLBytes: 1 << 20})
	if d, err := f.Lookup(context.Background(), s.url("/big-page")); err != nil || d.ID != s.url("/n") {
		t.Fatalf("big page: %v, %v", d, err)
	}
	if _, err := f.Lookup(context.Background(), s.url("/late-alternate")); !errors.Is(err, fetch.ErrContentType) {
		t.Fatalf("late alternate: %v", err)
	}
	if _, err := f.Lookup(context.Background(), s.url("/chunked")); !errors.Is(err, client.ErrTooLarge) {
		t.Fatalf("chunked: %v", err)
	}
	small := newFetcher(t, &fetch.Config{MaxDocumentBytes: 16})
	if _, err := small.Lookup(context.Background(), s.url("/n")); !errors.Is(err, client.ErrTooLarge) {
		t.Fatalf("MaxDocumentBytes not applied: %v", err)
	}
}

func TestWalkDefaultPageLimit(t *testing.T) {
	t.Parallel()
	s := newSite(t, "mastodon.test")
	pagedOutbox(t, s, "/outbox", 101, 1)
	f := newFetcher(t, nil)
	w := f.Walk(s.url("/outbox"), fetch.WalkLimits{})
	got, err := collect(t, w)
	if !errors.Is(err, fetch.ErrWalkLimit) || len(got) != 100 || w.Pages() != 100 || w.Pages() != fetch.WalkPagesDefault {
		t.Fatalf("items %d pages %d err %v", len(got), w.Pages(), err)
	}
}
