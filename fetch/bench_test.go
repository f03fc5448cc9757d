package fetch_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
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
// items/s, and overhead_ratio: the median walk over the median of a plain
// client following first and next with json.Unmarshal, alternated in the
// same loop.
func BenchmarkWalk(b *testing.B) {
	s := newSite(b, "mastodon.test")
	pagedOutbox(b, s, "/outbox", 100, 100)
	f := newFetcher(b, nil)
	ctx := context.Background()
	// The plain client reaches the site's *.test names by dialling its
	// loopback listener directly.
	plainTr := http.DefaultTransport.(*http.Transport).Clone()
	plainTr.MaxIdleConnsPerHost = client.MaxIdleConnsPerHostDefault
	plainTr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, s.srv.Listener.Addr().String())
	}
	defer plainTr.CloseIdleConnections()
	plain := &http.Client{Transport: plainTr, Timeout: fetch.TimeoutDefault}
	const want = 10_000

	baseline := func() time.Duration {
		start := time.Now()
		n, next := 0, s.url("/outbox")
		for next != "" {
			resp, err := plain.Get(next)
			if err != nil {
				b.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				b.Fatal(err)
			}
			var p struct {
				First, Next  string
				OrderedItems []any
			}
			if err := json.Unmarshal(body, &p); err != nil {
				b.Fatal(err)
			}
			n += len(p.OrderedItems)
			next = p.Next
			if p.First != "" {
				next = p.First
			}
		}
		if n != want {
			b.Fatalf("baseline walked %d items, want %d", n, want)
		}
		return time.Since(start)
	}
	walk := func() time.Duration {
		start := time.Now()
		n := 0
		for _, err := range f.Walk(s.url("/outbox"), fetch.WalkLimits{}).All(ctx) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != want {
			b.Fatalf("walked %d items, want %d", n, want)
		}
		return time.Since(start)
	}
	baseline()
	walk()

	var base, ours []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			base = append(base, baseline())
			ours = append(ours, walk())
		} else {
			ours = append(ours, walk())
			base = append(base, baseline())
		}
	}
	mo, mb := median(ours), median(base)
	if mo > 0 && mb > 0 {
		b.ReportMetric(want/mo.Seconds(), "items/s")
		b.ReportMetric(float64(mo)/float64(mb), "overhead_ratio")
	}
}
