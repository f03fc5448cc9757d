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
	plain := plainClient(b, s)

	baseline := func() time.Duration {
		start := time.Now()
		body := plainGet(b, plain, target)
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

	b.ReportAllocs()
	mo, mb := alternate(b, lookup, baseline)
	if mb > 0 {
		b.ReportMetric(float64(mo)/float64(mb), "overhead_ratio")
		b.ReportMetric(float64(mo.Nanoseconds()), "lookup_median_ns")
		b.ReportMetric(float64(mb.Nanoseconds()), "plain_median_ns")
	}
}

// plainClient is the baseline's client: what a careful user would
// otherwise write (the default transport, an overall timeout), reaching
// the site's *.test names by dialling its loopback listener directly.
func plainClient(b *testing.B, s *site) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = client.MaxIdleConnsPerHostDefault
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, s.srv.Listener.Addr().String())
	}
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: fetch.TimeoutDefault}
}

// plainGet is the baseline's GET: the whole body, no checks.
func plainGet(b *testing.B, c *http.Client, url string) []byte {
	resp, err := c.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// alternate runs ours and baseline once each per benchmark iteration,
// swapping their order every time so load from other processes falls on
// both alike, and returns their medians: on a shared machine a few
// stalled requests would swamp a ratio of sums.
func alternate(b *testing.B, ours, baseline func() time.Duration) (mo, mb time.Duration) {
	var o, base []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			base = append(base, baseline())
			o = append(o, ours())
		} else {
			o = append(o, ours())
			base = append(base, baseline())
		}
	}
	return median(o), median(base)
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
	plain := plainClient(b, s)
	const want = 10_000

	baseline := func() time.Duration {
		start := time.Now()
		n, next := 0, s.url("/outbox")
		for next != "" {
			body := plainGet(b, plain, next)
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

	mo, mb := alternate(b, walk, baseline)
	if mo > 0 && mb > 0 {
		b.ReportMetric(want/mo.Seconds(), "items/s")
		b.ReportMetric(float64(mo)/float64(mb), "overhead_ratio")
	}
}
