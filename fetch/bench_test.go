package fetch_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/fetch"
)

// BenchmarkLookup measures Lookup on loopback and reports overhead_ratio:
// the median Lookup over the median plain GET plus json.Unmarshal of the
// same document, measured alternately in the same loop (target at most
// 1.3). The baseline is what a careful user would otherwise write: the
// default transport with an overall timeout.
func BenchmarkLookup(b *testing.B) {
	s := newSite(b, "mastodon.test")
	s.ap("/users/alice/statuses/1", mastodonNote)
	f := newFetcher(b, nil)
	ctx := context.Background()
	target := s.url("/users/alice/statuses/1")
	plainURL := s.srv.URL + "/users/alice/statuses/1"
	plainTr := http.DefaultTransport.(*http.Transport).Clone()
	plainTr.MaxIdleConnsPerHost = client.MaxIdleConnsPerHostDefault
	defer plainTr.CloseIdleConnections()
	plain := &http.Client{Transport: plainTr, Timeout: fetch.TimeoutDefault}

	baseline := func() time.Duration {
		start := time.Now()
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
		return time.Since(start)
	}
	lookup := func() time.Duration {
		start := time.Now()
		if _, _, err := fetch.LookupAs[map[string]any](ctx, f, target); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	// Warm both connections so neither pays a dial in the timed loop.
	baseline()
	lookup()

	var base, ours []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		// Alternate the order so neither always runs right after the other.
		if i%2 == 0 {
			base = append(base, baseline())
			ours = append(ours, lookup())
		} else {
			ours = append(ours, lookup())
			base = append(base, baseline())
		}
	}
	// Medians: on a shared machine a few stalled requests would swamp a
	// ratio of sums.
	mo, mb := median(ours), median(base)
	if mb > 0 {
		b.ReportMetric(float64(mo)/float64(mb), "overhead_ratio")
		b.ReportMetric(float64(mo.Nanoseconds()), "lookup_median_ns")
		b.ReportMetric(float64(mb.Nanoseconds()), "plain_median_ns")
	}
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[len(d)/2]
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
