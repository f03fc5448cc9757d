package deliver_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
)

func TestRunDeliversWhatIsSent(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *deliver.Config) { c.PollInterval = time.Hour }) // only Send's wake-up can start it
	ib := newInbox(t, b.clock, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- b.d.Run(ctx) }()
	b.sendBatch(t, "1", deliver.Batch{Tag: "run"}, ib.URL("/a"), ib.URL("/b"))
	waitFor(t, func() bool {
		st, _ := b.d.Status(context.Background(), "run")
		return st.Delivered == 2
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestRunShutdownDeliversInFlightLeavesRestQueued(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *deliver.Config) {
		c.PerHost = 1
		c.Concurrency = 4
		c.PollInterval = 10 * time.Millisecond
	})
	ib := newInbox(t, b.clock, nil)
	release := ib.hold(t)
	var inboxes []string
	for i := range 4 {
		inboxes = append(inboxes, ib.URL(fmt.Sprintf("/%d", i)))
	}
	b.sendBatch(t, "1", deliver.Batch{Tag: "shut"}, inboxes...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- b.d.Run(ctx) }()
	<-ib.entered // one is in flight; three wait for the host's slot
	cancel()
	release()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := len(ib.requests()); n != 1 {
		t.Fatalf("%d requests, want only the one in flight", n)
	}
	st, _ := b.d.Status(context.Background(), "shut")
	if st != (deliver.BatchStatus{Delivered: 1, Pending: 3}) {
		t.Fatalf("status %+v, want 1 delivered and 3 left queued", st)
	}
	// The rest are claimable at once, with no attempt counted.
	jobs, err := b.q.Claim(context.Background(), deliver.ClaimOpts{Now: b.clock.Now(), Lease: time.Minute, Limit: 10})
	if err != nil || len(jobs) != 3 {
		t.Fatalf("claimed %d, %v; want the 3 left", len(jobs), err)
	}
	for _, j := range jobs {
		if j.Attempts != 0 {
			t.Errorf("job to %s has %d attempts, want 0", j.Inbox, j.Attempts)
		}
	}
}

func TestRunShutdownGraceBounded(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *deliver.Config) {
		c.ShutdownGrace = 20 * time.Millisecond
		c.PollInterval = 10 * time.Millisecond
	})
	ib := newInbox(t, b.clock, nil)
	ib.hold(t) // never answers
	b.sendBatch(t, "1", deliver.Batch{Tag: "grace"}, ib.URL("/stuck"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- b.d.Run(ctx) }()
	<-ib.entered
	cancel()
	if err := <-done; err != nil { // returns although the inbox never answers
		t.Fatalf("Run: %v", err)
	}
	st, _ := b.d.Status(context.Background(), "grace")
	if st.Pending != 1 {
		t.Fatalf("status %+v, want the cut-off delivery still queued", st)
	}
}
