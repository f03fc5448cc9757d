package driver_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/driver/drivertest"
)

// countingQueue is a custom Queue, layered by wrapping another: it counts
// the jobs claimed and settled, for a dashboard, and leaves storing them
// to the queue it wraps.
type countingQueue struct {
	driver.Queue
	claimed, settled atomic.Int64
}

var _ driver.Queue = (*countingQueue)(nil)

func (q *countingQueue) Claim(ctx context.Context, opts driver.ClaimOpts) ([]*driver.Job, error) {
	jobs, err := q.Queue.Claim(ctx, opts)
	q.claimed.Add(int64(len(jobs)))
	return jobs, err
}

func (q *countingQueue) Finish(ctx context.Context, ref driver.JobRef, o driver.Outcome) error {
	err := q.Queue.Finish(ctx, ref, o)
	if err == nil && o.Result != driver.ResultPending {
		q.settled.Add(1)
	}
	return err
}

// A custom Queue passes the conformance suite, run from its test file, and
// then serves a Deliverer like any other.
func Example_customQueue() {
	_ = func(t *testing.T) { // in countingqueue_test.go
		drivertest.TestQueue(t, func(testing.TB) driver.Queue {
			return &countingQueue{Queue: &deliver.MemoryQueue{}}
		})
	}

	ctx := context.Background()
	q := &countingQueue{Queue: &deliver.MemoryQueue{}} // deliver.New(q, keys, client, cfg)
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	_ = q.Enqueue(ctx, &driver.Envelope{Body: []byte(`{}`), EnqueuedAt: now,
		Inboxes: []string{"https://b.example/inbox", "https://c.example/inbox"}})
	jobs, _ := q.Claim(ctx, driver.ClaimOpts{Now: now, Lease: time.Minute, Limit: 10})
	_ = q.Finish(ctx, jobs[0].Ref(), driver.Outcome{Result: driver.ResultDelivered, Attempts: 1})
	_ = q.Finish(ctx, jobs[1].Ref(), driver.Outcome{RetryAt: now.Add(time.Minute), Attempts: 1})
	fmt.Println(q.claimed.Load(), "claimed,", q.settled.Load(), "settled")
	// Output: 2 claimed, 1 settled
}
