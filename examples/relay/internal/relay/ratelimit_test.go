package relay

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestNoisySubscriberIsLimited: a subscriber posting faster than the
// default limit gets 429 with a Retry-After, and no more of its posts reach
// the others; another subscriber's posts still do.
func TestNoisySubscriberIsLimited(t *testing.T) {
	f := newFixture(t, nil)
	f.subscribe("a", Public)
	f.subscribe("b", Public)
	f.subscribe("c", Public)
	var limited int
	var retry string
	for i := range 300 {
		w := f.create("a", fmt.Sprintf("n%d", i))
		if w.Code == http.StatusTooManyRequests {
			limited++
			retry = w.Header().Get("Retry-After")
		}
	}
	relayed := len(f.send.take())
	if limited == 0 || relayed >= 300 {
		t.Fatalf("300 posts at once: %d answered 429, %d relayed; want the limit to hold", limited, relayed)
	}
	if n, err := strconv.Atoi(retry); err != nil || n < 1 {
		t.Fatalf("Retry-After = %q; want whole seconds, at least 1", retry)
	}
	if w := f.create("b", "quiet"); w.Code != http.StatusAccepted || len(f.send.take()) != 1 {
		t.Fatalf("another subscriber's post = %d; want it relayed", w.Code)
	}
}

func TestRateLimitConfig(t *testing.T) {
	clk := newClock()
	f := newFixture(t, func(c *Config) { c.Now = clk.Now; c.RatePerMinute = 60; c.RateBurst = 3 })
	f.subscribe("a", Public) // every activity counts: this Follow too
	f.subscribe("b", Public)
	for i, want := range []int{202, 202, 429} {
		if w := f.create("a", fmt.Sprint(i)); w.Code != want {
			t.Fatalf("post %d = %d; want %d", i, w.Code, want)
		} else if want == 429 && w.Header().Get("Retry-After") != "1" {
			t.Fatalf("Retry-After = %q; want 1 (one post a second)", w.Header().Get("Retry-After"))
		}
	}
	clk.advance(time.Second)
	if w := f.create("a", "later"); w.Code != http.StatusAccepted {
		t.Fatalf("a second later = %d; want 202", w.Code)
	}
	// The limit is per server: the same server's other actors share it.
	alice, as := f.addActor("a", "/users/alice")
	if w := f.post(as, map[string]any{"id": alice + "/s/1", "type": "Create", "actor": alice, "to": []string{Public},
		"object": map[string]any{"id": alice + "/s/1/n", "type": "Note"}}); w.Code != http.StatusTooManyRequests {
		t.Fatalf("another actor of the limited server = %d; want 429", w.Code)
	}

	off := newFixture(t, func(c *Config) { c.DisableRateLimit = true; c.RatePerMinute = 1; c.RateBurst = 1 })
	off.subscribe("a", Public)
	for i := range 5 {
		if w := off.create("a", fmt.Sprint(i)); w.Code != http.StatusAccepted {
			t.Fatalf("with DisableRateLimit, post %d = %d", i, w.Code)
		}
	}
}

// TestLimiterBounded: the limiter keeps a bounded number of servers.
func TestLimiterBounded(t *testing.T) {
	clk := newClock()
	l := newLimiter(60, 1, 10, clk.Now)
	for i := range 100 {
		l.allow(fmt.Sprintf("h%d.example", i))
	}
	if n := l.len(); n > 10 {
		t.Fatalf("%d servers kept; want at most 10", n)
	}
}
