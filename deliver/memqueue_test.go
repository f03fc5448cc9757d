package deliver_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/delivertest"
)

func TestMemoryQueueConformance(t *testing.T) {
	delivertest.TestQueue(t, func(t *testing.T) deliver.Queue { return &deliver.MemoryQueue{} })
}

func TestMemoryBreakerStoreConformance(t *testing.T) {
	delivertest.TestBreakerStore(t, func(t *testing.T) deliver.BreakerStore { return &deliver.MemoryBreakerStore{} })
}

// Depth counts each lane's jobs, due, claimed or waiting for a retry;
// finished and dropped jobs leave it; every lane is always present.
func TestMemoryQueueDepth(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	q := &deliver.MemoryQueue{}
	depth := q.Depth
	want := map[deliver.Lane]int{deliver.LanePriority: 0, deliver.LaneNormal: 0, deliver.LaneLow: 0}
	if got := depth(); !maps.Equal(got, want) {
		t.Fatalf("empty queue: Depth = %v, want %v", got, want)
	}
	for lane, n := range map[deliver.Lane]int{deliver.LanePriority: 2, deliver.LaneNormal: 3, deliver.LaneLow: 4} {
		var inboxes []string
		for i := range n {
			inboxes = append(inboxes, fmt.Sprintf("https://h%d.example/inbox", i))
		}
		e := &deliver.Envelope{ActivityID: fmt.Sprint("https://a.example/", lane), Tag: fmt.Sprint("lane", lane),
			Inboxes: inboxes, EnqueuedAt: t0, Lane: lane}
		if err := q.Enqueue(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	jobs, err := q.Claim(ctx, deliver.ClaimOpts{Now: t0, Lease: time.Minute, Limit: 3}) // both priority jobs, one normal
	if err != nil || len(jobs) != 3 {
		t.Fatalf("Claim: %d jobs, %v", len(jobs), err)
	}
	if err := q.Finish(ctx, jobs[0].Ref(), deliver.Outcome{Result: deliver.ResultDelivered, Attempts: 1}); err != nil {
		t.Fatal(err)
	}
	if err := q.Finish(ctx, jobs[1].Ref(), deliver.Outcome{RetryAt: t0.Add(time.Hour), Attempts: 1}); err != nil {
		t.Fatal(err)
	}
	want = map[deliver.Lane]int{deliver.LanePriority: 1, deliver.LaneNormal: 3, deliver.LaneLow: 4}
	if got := depth(); !maps.Equal(got, want) {
		t.Fatalf("Depth = %v, want %v (claimed and retrying jobs count, delivered ones not)", got, want)
	}
	if _, err := q.Drop(ctx, deliver.DropFilter{Tag: fmt.Sprint("lane", deliver.LaneLow)}); err != nil {
		t.Fatal(err)
	}
	want[deliver.LaneLow] = 0
	if got := depth(); !maps.Equal(got, want) {
		t.Fatalf("after Drop: Depth = %v, want %v", got, want)
	}
	if total := want[deliver.LanePriority] + want[deliver.LaneNormal] + want[deliver.LaneLow]; q.Len() != total {
		t.Fatalf("Len %d, Depth's sum %d", q.Len(), total)
	}
}
