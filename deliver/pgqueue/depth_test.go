package pgqueue_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/pgqueue"
	"github.com/fedkit/fedkit/internal/pgtest"
)

// Depth counts each lane's jobs, due, claimed or waiting for a retry, as
// another process on the same tables sees them; finished jobs leave it.
func TestDepth(t *testing.T) {
	cs := pgtest.ConnString(t)
	q, reader := openQueue(t, cs, nil), openQueue(t, cs, nil)
	ctx := context.Background()
	depth := func() map[driver.Lane]int {
		t.Helper()
		d, err := reader.Depth(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	want := map[driver.Lane]int{driver.LanePriority: 0, driver.LaneNormal: 0, driver.LaneLow: 0}
	if got := depth(); !maps.Equal(got, want) {
		t.Fatalf("empty queue: Depth = %v, want %v", got, want)
	}
	for lane, n := range map[driver.Lane]int{driver.LanePriority: 2, driver.LaneNormal: 3, driver.LaneLow: 4} {
		e := env(fmt.Sprint("lane", lane), inboxes(n)...)
		e.Lane = lane
		if err := q.Enqueue(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	jobs := claim(t, q, t0, 3) // the two priority jobs and one normal
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

	bare, err := pgqueue.New(pgtest.Pool(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bare.Depth(ctx); !errors.Is(err, pgqueue.ErrNotMigrated) {
		t.Fatalf("Depth before Migrate: %v, want ErrNotMigrated", err)
	}
}
