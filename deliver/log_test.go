package deliver_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestAttemptsLoggedAtDebug(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	b := setup(t, func(c *deliver.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	ib := newInbox(t, b.clock, status(410))
	b.send(t, "1", ib.URL("/inbox"))
	b.runDue(t)
	out := buf.String()
	for _, want := range []string{"deliver: attempt", "inbox=" + ib.URL("/inbox"), "status=410", "outcome=refused", "scheme=rfc9421", "deliver: refused for good"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// switchableBreakers fails every call while down, as a Redis store does
// while Redis is away, and works as a MemoryBreakerStore otherwise.
type switchableBreakers struct {
	deliver.MemoryBreakerStore
	down atomic.Bool
}

func (s *switchableBreakers) Admit(ctx context.Context, light string, now time.Time, r driver.BreakerRule) (driver.Admission, error) {
	if s.down.Load() {
		return driver.Admission{}, errors.New("redis down")
	}
	return s.MemoryBreakerStore.Admit(ctx, light, now, r)
}

func (s *switchableBreakers) Record(ctx context.Context, light string, probe, ok bool, now time.Time, r driver.BreakerRule) error {
	if s.down.Load() {
		return errors.New("redis down")
	}
	return s.MemoryBreakerStore.Record(ctx, light, probe, ok, now, r)
}

// TestStoreOutageLoggedOnce: a store that fails on every delivery logs one
// warning when it starts failing and one line when it answers again, not
// one per call (two per delivery for the breaker).
func TestStoreOutageLoggedOnce(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	store := &switchableBreakers{}
	store.down.Store(true)
	b := setup(t, func(c *deliver.Config) {
		c.Breaker = &deliver.BreakerConfig{Store: store}
		c.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	})
	ib := newInbox(t, b.clock, nil)
	var inboxes []string
	for i := range 5 {
		inboxes = append(inboxes, ib.URL(fmt.Sprintf("/%d", i)))
	}
	b.send(t, "1", inboxes...)
	b.runDue(t)
	if n := len(ib.requests()); n != 5 {
		t.Fatalf("%d requests, want all 5 sent despite the store", n)
	}
	if n := strings.Count(buf.String(), "breaker store failed"); n != 1 {
		t.Fatalf("%d failure lines, want 1:\n%s", n, buf.String())
	}
	store.down.Store(false)
	b.clock.Advance(time.Minute)
	b.send(t, "2", ib.URL("/again"))
	b.runDue(t)
	out := buf.String()
	if n := strings.Count(out, "breaker store answers again"); n != 1 || !strings.Contains(out, "failed_calls=10") || !strings.Contains(out, "outage=1m0s") {
		t.Fatalf("want one recovery line with 10 failed calls over a minute:\n%s", out)
	}
	store.down.Store(true)
	b.send(t, "3", ib.URL("/down-again"))
	b.runDue(t)
	if n := strings.Count(buf.String(), "breaker store failed"); n != 2 {
		t.Fatalf("%d failure lines, want a second outage logged anew:\n%s", n, buf.String())
	}
}
