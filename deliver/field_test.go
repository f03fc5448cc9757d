package deliver_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/internal/fedsim"
)

func simClient(t *testing.T, sim *fedsim.Sim, timeout time.Duration) *client.Client {
	t.Helper()
	c, err := client.New(&client.Config{AllowPrivate: fedsim.Loopback, Resolver: sim.Resolver(),
		Timeout: timeout, ResponseHeaderTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// A tarpit's timeouts are its breaker's failures: after the threshold its
// remaining deliveries are held, not each sent to wait out a timeout.
func TestTarpitTimeoutsOpenItsBreaker(t *testing.T) {
	t.Parallel()
	sim, err := fedsim.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	sim.SetHost("tarpit.example", fedsim.Tarpit())
	var held, failed atomic.Int64
	cfg := &deliver.Config{OnAttempt: func(_ context.Context, a deliver.Attempt) {
		switch a.Outcome {
		case deliver.AttemptHeld:
			held.Add(1)
		case deliver.AttemptFailed:
			failed.Add(1)
		}
	}}
	d, err := deliver.New(&deliver.MemoryQueue{}, &keys{}, simClient(t, sim, 100*time.Millisecond), cfg)
	if err != nil {
		t.Fatal(err)
	}
	const n = 30
	var inboxes []string
	for i := range n {
		inboxes = append(inboxes, sim.URL("tarpit.example", fmt.Sprintf("/u%d/inbox", i)))
	}
	if err := d.Send(context.Background(), testKeyID, activity("1"), inboxes); err != nil {
		t.Fatal(err)
	}
	if _, err := d.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The breaker opens on the threshold-th failure; up to PerHost more
	// may already be on their way. Failures are counted as the Deliverer saw
	// them: on a loaded machine an attempt can time out before its request
	// reaches the tarpit, so the tarpit may have received fewer.
	sent := int(failed.Load())
	if sent < deliver.BreakerThresholdDefault || sent > deliver.BreakerThresholdDefault+deliver.PerHostDefault {
		t.Fatalf("%d attempts failed against the tarpit, want the breaker to hold after %d", sent, deliver.BreakerThresholdDefault)
	}
	if got := sim.Stats("tarpit.example").Received; got > sent {
		t.Fatalf("the tarpit received %d requests, more than the %d attempts made", got, sent)
	}
	if h := held.Load(); h != int64(n-sent) {
		t.Fatalf("%d held, want the %d not sent", h, n-sent)
	}
}

// An attempt is bounded by AttemptTimeout even when the client would wait
// longer, so no request outlives its lease; the bound is at most half the
// Lease.
func TestAttemptTimeoutBoundsARequest(t *testing.T) {
	t.Parallel()
	t.Run("AttemptTimeout", func(t *testing.T) {
		t.Parallel()
		attemptBounded(t, &deliver.Config{AttemptTimeout: 100 * time.Millisecond})
	})
	t.Run("HalfTheLease", func(t *testing.T) {
		t.Parallel()
		attemptBounded(t, &deliver.Config{Lease: 200 * time.Millisecond})
	})
}

func attemptBounded(t *testing.T, cfg *deliver.Config) {
	sim, err := fedsim.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	sim.SetHost("tarpit.example", fedsim.Tarpit())
	var failed atomic.Int64
	cfg.OnAttempt = func(_ context.Context, a deliver.Attempt) {
		if a.Outcome == deliver.AttemptFailed {
			failed.Add(1)
		}
	}
	d, err := deliver.New(&deliver.MemoryQueue{}, &keys{}, simClient(t, sim, time.Hour), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Send(context.Background(), testKeyID, activity("1"), []string{sim.URL("tarpit.example", "/inbox")}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _, _ = d.RunDue(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute): // a bound on a hang, not a timing assertion
		t.Fatal("an attempt outlived AttemptTimeout")
	}
	if failed.Load() != 1 {
		t.Fatalf("%d failed attempts, want 1", failed.Load())
	}
}

// Servers that never answer do not slow the ones that do: with the default
// Config, 40 tarpit hosts holding 80 requests open leave the healthy host's
// deliveries to go through (with the old 16 places in flight, the tarpits
// took them all).
func TestTarpitsDoNotStallHealthyHosts(t *testing.T) {
	t.Parallel()
	sim, err := fedsim.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	var inboxes []string
	for h := range 40 {
		host := fmt.Sprintf("tarpit%d.example", h)
		sim.SetHost(host, fedsim.Tarpit())
		for i := range 2 {
			inboxes = append(inboxes, sim.URL(host, fmt.Sprintf("/u%d/inbox", i)))
		}
	}
	const healthy = 50
	for i := range healthy {
		inboxes = append(inboxes, sim.URL("ok.example", fmt.Sprintf("/u%d/inbox", i)))
	}
	all := make(chan struct{})
	var delivered atomic.Int64
	cfg := &deliver.Config{ShutdownGrace: 10 * time.Millisecond, OnSettled: func(_ context.Context, s deliver.Settlement) {
		if s.Result == driver.ResultDelivered && delivered.Add(1) == healthy {
			close(all)
		}
	}}
	// The client would wait an hour: only the Deliverer's design keeps the
	// healthy host moving.
	d, err := deliver.New(&deliver.MemoryQueue{}, &keys{}, simClient(t, sim, time.Hour), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Send(context.Background(), testKeyID, activity("1"), inboxes); err != nil {
		t.Fatal(err)
	}
	stop := startRun(t, d)
	defer stop()
	select {
	case <-all:
	case <-time.After(time.Minute): // a bound on a stall, not a timing assertion
		t.Fatalf("%d of %d healthy deliveries while tarpits hold requests open", delivered.Load(), healthy)
	}
	if st := sim.Stats("ok.example"); st.Answered[202] != healthy {
		t.Fatalf("healthy host answered %v", st.Answered)
	}
}
