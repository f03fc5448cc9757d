package pgqueue_test

import (
	"context"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/pgqueue"
)

// farClocks are caller clocks years away from the database server's. Every
// rule the queue applies compares times the caller gave (ClaimOpts.Now,
// Envelope.EnqueuedAt, Outcome.RetryAt, Notify's now), so each must behave
// the same whatever the server's own clock says.
var farClocks = []struct {
	name string
	now  time.Time
}{
	{"past-2019", time.Date(2019, 3, 1, 12, 0, 0, 0, time.UTC)},
	{"future-2031", time.Date(2031, 7, 1, 12, 0, 0, 0, time.UTC)},
}

// TestCallerClockThroughout drives due times, leases and retries with a
// caller clock years from the server's.
func TestCallerClockThroughout(t *testing.T) {
	for _, tc := range farClocks {
		t.Run(tc.name, func(t *testing.T) {
			now := tc.now
			q := newQueue(t, nil)
			ctx := context.Background()
			e := env("far")
			e.Inboxes = []string{"https://h.example/inbox"}
			e.EnqueuedAt = now
			deadline := now.Add(time.Hour)
			e.Deadline = deadline
			if err := q.Enqueue(ctx, e); err != nil {
				t.Fatal(err)
			}
			if got := claim(t, q, now.Add(-time.Second), 10); len(got) != 0 {
				t.Fatalf("claimed a second before it was due")
			}
			jobs := claim(t, q, now, 10)
			if len(jobs) != 1 {
				t.Fatalf("claimed %d at its due time, want 1", len(jobs))
			}
			if !jobs[0].LeaseUntil.Equal(now.Add(time.Minute)) {
				t.Fatalf("lease until %v, want %v", jobs[0].LeaseUntil, now.Add(time.Minute))
			}
			if got := claim(t, q, now.Add(30*time.Second), 10); len(got) != 0 {
				t.Fatalf("leased job claimed again inside its lease")
			}
			// The lease lapses on the caller's clock.
			jobs = claim(t, q, now.Add(time.Minute), 10)
			if len(jobs) != 1 {
				t.Fatalf("job not claimable once its lease lapsed")
			}
			retry := now.Add(10 * time.Minute)
			if err := q.Finish(ctx, driver.JobRef{ID: jobs[0].ID, Token: jobs[0].Token},
				driver.Outcome{Result: driver.ResultPending, RetryAt: retry, Attempts: 1}); err != nil {
				t.Fatal(err)
			}
			if got := claim(t, q, retry.Add(-time.Second), 10); len(got) != 0 {
				t.Fatalf("retry claimed before RetryAt")
			}
			jobs = claim(t, q, retry, 10)
			if len(jobs) != 1 || jobs[0].Attempts != 1 {
				t.Fatalf("retry at RetryAt: %d jobs", len(jobs))
			}
			// A retry past the send's deadline comes due at the deadline.
			if err := q.Finish(ctx, driver.JobRef{ID: jobs[0].ID, Token: jobs[0].Token},
				driver.Outcome{Result: driver.ResultPending, RetryAt: deadline.Add(time.Hour), Attempts: 2}); err != nil {
				t.Fatal(err)
			}
			if got := claim(t, q, deadline.Add(-time.Second), 10); len(got) != 0 {
				t.Fatalf("claimed before the deadline it was capped to")
			}
			if got := claim(t, q, deadline, 10); len(got) != 1 {
				t.Fatalf("a retry capped to the deadline was not due at it")
			}
		})
	}
}

// TestNotifyWakesOnCallerClock: a job due two seconds from now by the
// caller's clock wakes Notify about then, though the poll is an hour and
// the server's clock is years away. Before Notify measured on the caller's
// clock it compared due_at with the wall clock and slept out the hour.
func TestNotifyWakesOnCallerClock(t *testing.T) {
	for _, tc := range farClocks {
		t.Run(tc.name, func(t *testing.T) {
			now := tc.now
			q := newQueue(t, &pgqueue.Config{PollInterval: time.Hour})
			ctx, cancel := context.WithCancel(context.Background())
			wakes := make(chan struct{}, 16)
			done := make(chan error, 1)
			go func() {
				err := q.Notify(ctx, func() time.Time { return now }, func() {
					select {
					case wakes <- struct{}{}:
					default:
					}
				})
				done <- err
			}()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Error(err)
				}
			}()
			<-wakes // LISTEN took hold
			e := env("notify-far")
			e.Inboxes = []string{"https://h.example/inbox"}
			e.EnqueuedAt = now.Add(2 * time.Second)
			if err := q.Enqueue(ctx, e); err != nil {
				t.Fatal(err)
			}
			<-wakes // the enqueue's notification
			select {
			case <-wakes: // the job came due by the caller's clock
			case <-time.After(time.Minute):
				t.Fatal("Notify did not wake for a job due by the caller's clock")
			}
		})
	}
}
