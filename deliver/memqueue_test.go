package deliver_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/driver/drivertest"
)

func TestMemoryQueueConformance(t *testing.T) {
	drivertest.TestQueue(t, func(t testing.TB) driver.Queue { return &deliver.MemoryQueue{} })
}

func TestMemoryBreakerStoreConformance(t *testing.T) {
	drivertest.TestBreakerStore(t, func(t testing.TB) driver.BreakerStore { return &deliver.MemoryBreakerStore{} })
}

// Depth counts each lane's jobs, due, claimed or waiting for a retry;
// finished and dropped jobs leave it; every lane is always present.
func TestMemoryQueueDepth(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	q := &deliver.MemoryQueue{}
	depth := q.Depth
	want := map[driver.Lane]int{driver.LanePriority: 0, driver.LaneNormal: 0, driver.LaneLow: 0}
	if got := depth(); !maps.Equal(got, want) {
		t.Fatalf("empty queue: Depth = %v, want %v", got, want)
	}
	for lane, n := range map[driver.Lane]int{driver.LanePriority: 2, driver.LaneNormal: 3, driver.LaneLow: 4} {
		var inboxes []string
		for i := range n {
			inboxes = append(inboxes, fmt.Sprintf("https://h%d.example/inbox", i))
		}
		e := &driver.Envelope{ActivityID: fmt.Sprint("https://a.example/", lane), Tag: fmt.Sprint("lane", lane),
			Inboxes: inboxes, EnqueuedAt: t0, Lane: lane}
		if err := q.Enqueue(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	jobs, err := q.Claim(ctx, driver.ClaimOpts{Now: t0, Lease: time.Minute, Limit: 3}) // both priority jobs, one normal
	if err != nil || len(jobs) != 3 {
		t.Fatalf("Claim: %d jobs, %v", len(jobs), err)
	}
	if err := q.Finish(ctx, jobs[0].Ref(), driver.Outcome{Result: driver.ResultDelivered, Attempts: 1}); err != nil {
		t.Fatal(err)
	}
	if err := q.Finish(ctx, jobs[1].Ref(), driver.Outcome{RetryAt: t0.Add(time.Hour), Attempts: 1}); err != nil {
		t.Fatal(err)
	}
	want = map[driver.Lane]int{driver.LanePriority: 1, driver.LaneNormal: 3, driver.LaneLow: 4}
	if got := depth(); !maps.Equal(got, want) {
		t.Fatalf("Depth = %v, want %v (claimed and retrying jobs count, delivered ones not)", got, want)
	}
	if _, err := q.Drop(ctx, driver.DropFilter{Tag: fmt.Sprint("lane", driver.LaneLow)}); err != nil {
		t.Fatal(err)
	}
	want[driver.LaneLow] = 0
	if got := depth(); !maps.Equal(got, want) {
		t.Fatalf("after Drop: Depth = %v, want %v", got, want)
	}
	if total := want[driver.LanePriority] + want[driver.LaneNormal] + want[driver.LaneLow]; q.Len() != total {
		t.Fatalf("Len %d, Depth's sum %d", q.Len(), total)
	}
}
