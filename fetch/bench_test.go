package fetch_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/fedkit/fedkit/fetch"
)

// BenchmarkLookup measures Lookup on loopback and reports overhead_ratio:
// its time over a plain GET plus json.Unmarshal of the same document,
// measured in the same run (target at most 1.3).
func BenchmarkLookup(b *testing.B) {
	s := newSite(b, "mastodon.test")
	s.ap("/users/alice/statuses/1", mastodonNote)
	f := newFetcher(b, nil)
	ctx := context.Background()
	target := s.url("/users/alice/statuses/1")
	plainURL := s.srv.URL + "/users/alice/statuses/1"
	plain := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	defer plain.CloseIdleConnections()

	baseline := func() {
		resp, err := plain.Get(plainURL)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			b.Fatal(err)
		}
	}
	// Warm both connections so neither pays a dial in the timed loops.
	baseline()
	if _, _, err := fetch.LookupAs[map[string]any](ctx, f, target); err != nil {
		b.Fatal(err)
	}
	// Alternate the two per iteration so load from other processes falls
	// on both alike.
	var base, ours time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		baseline()
		t1 := time.Now()
		if _, _, err := fetch.LookupAs[map[string]any](ctx, f, target); err != nil {
			b.Fatal(err)
		}
		base += t1.Sub(t0)
		ours += time.Since(t1)
	}
	b.StopTimer()
	b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "lookup-ns/op")
	b.ReportMetric(float64(ours)/float64(base), "overhead_ratio")
}

// BenchmarkWalk walks 10,000 items over 100 pages on loopback and reports
// items/s.
func BenchmarkWalk(b *testing.B) {
	s := newSite(b, "mastodon.test")
	pagedOutbox(b, s, "/outbox", 100, 100)
	f := newFetcher(b, nil)
	ctx := context.Background()
	items := 0
	b.ResetTimer()
	for range b.N {
		w := f.Walk(s.url("/outbox"), fetch.WalkLimits{})
		for _, err := range w.All(ctx) {
			if err != nil {
				b.Fatal(err)
			}
			items++
		}
	}
	b.StopTimer()
	if items != 10_000*b.N {
		b.Fatalf("walked %d items, want %d", items, 10_000*b.N)
	}
	b.ReportMetric(float64(items)/b.Elapsed().Seconds(), "items/s")
}
