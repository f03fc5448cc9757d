package drivertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/internal/suite"
)

// TestQueue runs the conformance suite every driver.Queue must pass.
// newQueue returns an empty queue for each subtest; it may be called from
// parallel subtests.
func TestQueue(t testing.TB, newQueue func(t testing.TB) driver.Queue) {
	t.Helper()
	// Whole seconds in UTC, so a backend storing timestamps at microsecond
	// precision (Postgres) compares equal.
	t0 := time.Now().UTC().Truncate(time.Second)
	lease := 5 * time.Minute
	ctx := context.Background()

	env := func(tag string, inboxes ...string) *driver.Envelope {
		return &driver.Envelope{
			KeyID:      "https://a.example/users/alice#main-key",
			ActivityID: "https://a.example/activities/" + tag,
			ActorID:    "https://a.example/users/alice",
			Body:       []byte(`{"id":"https://a.example/activities/` + tag + `"}`),
			Inboxes:    inboxes,
			EnqueuedAt: t0,
			Tag:        tag,
		}
	}
	claim := func(t testing.TB, q driver.Queue, now time.Time, limit int) []*driver.Job {
		t.Helper()
		jobs, err := q.Claim(ctx, driver.ClaimOpts{Now: now, Lease: lease, Limit: limit})
		if err != nil {
			t.Fatalf("Claim: %v", err)
		}
		return jobs
	}
	enqueue := func(t testing.TB, q driver.Queue, e *driver.Envelope) {
		t.Helper()
		if err := q.Enqueue(ctx, e); err != nil {
			t.Fatalf("Enqueue: %v", err)
		}
	}
	finish := func(t testing.TB, q driver.Queue, j *driver.Job, o driver.Outcome) {
		t.Helper()
		if err := q.Finish(ctx, j.Ref(), o); err != nil {
			t.Fatalf("Finish(%d): %v", j.ID, err)
		}
	}
	inboxesOf := func(jobs []*driver.Job) []string {
		var s []string
		for _, j := range jobs {
			s = append(s, j.Inbox)
		}
		return s
	}
	status := func(t testing.TB, q driver.Queue, tag string) driver.BatchStatus {
		t.Helper()
		s, err := q.Status(ctx, tag)
		if err != nil {
			t.Fatalf("Status: %v", err)
		}
		return s
	}

	suite.Run(t, "FanOutOneJobPerInbox", true, func(t testing.TB) {
		q := newQueue(t)
		e := env("fan", "https://b.example/inbox", "https://c.example/inbox", "https://d.example/inbox")
		e.Deadline = t0.Add(time.Hour)
		e.MaxAttempts = 3
		e.OrderingKey = "obj"
		e.SynchronizeCollection = true
		e.TraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		enqueue(t, q, e)
		jobs := claim(t, q, t0, 10)
		got := inboxesOf(jobs)
		slices.Sort(got)
		if !slices.Equal(got, e.Inboxes) {
			t.Fatalf("claimed inboxes %v, want %v", got, e.Inboxes)
		}
		ids := map[int64]bool{}
		for _, j := range jobs {
			if ids[j.ID] {
				t.Errorf("job ID %d claimed twice", j.ID)
			}
			ids[j.ID] = true
			g := j.Envelope
			if g.KeyID != e.KeyID || g.ActivityID != e.ActivityID || g.ActorID != e.ActorID ||
				string(g.Body) != string(e.Body) || g.Tag != e.Tag || !g.Deadline.Equal(e.Deadline) ||
				g.MaxAttempts != 3 || g.Lane != driver.LaneNormal || g.OrderingKey != "obj" ||
				!g.SynchronizeCollection || g.TraceParent != e.TraceParent {
				t.Errorf("envelope did not round-trip: got %+v", g)
			}
			if j.Attempts != 0 {
				t.Errorf("fresh job has Attempts %d", j.Attempts)
			}
			if !j.LeaseUntil.Equal(t0.Add(lease)) {
				t.Errorf("LeaseUntil %v, want %v", j.LeaseUntil, t0.Add(lease))
			}
		}
		if s := status(t, q, "fan"); s.Pending != 3 {
			t.Errorf("status %+v, want 3 pending", s)
		}
	})

	suite.Run(t, "NotDueNotClaimed", true, func(t testing.TB) {
		q := newQueue(t)
		e := env("due", "https://b.example/inbox")
		e.EnqueuedAt = t0.Add(time.Minute)
		enqueue(t, q, e)
		if jobs := claim(t, q, t0, 10); len(jobs) != 0 {
			t.Fatalf("claimed %d jobs before they were due", len(jobs))
		}
		if jobs := claim(t, q, t0.Add(time.Minute), 10); len(jobs) != 1 {
			t.Fatalf("claimed %d jobs when due, want 1", len(jobs))
		}
	})

	suite.Run(t, "LimitRespected", true, func(t testing.TB) {
		q := newQueue(t)
		enqueue(t, q, env("lim", "https://b.example/1", "https://b.example/2", "https://b.example/3"))
		if jobs := claim(t, q, t0, 2); len(jobs) != 2 {
			t.Fatalf("claimed %d, want 2", len(jobs))
		}
		if jobs := claim(t, q, t0, 2); len(jobs) != 1 {
			t.Fatalf("claimed %d, want the 1 left", len(jobs))
		}
	})

	suite.Run(t, "DueOrderThenEnqueueOrder", true, func(t testing.TB) {
		q := newQueue(t)
		late := env("late", "https://b.example/late")
		late.EnqueuedAt = t0.Add(-time.Second)
		early := env("early", "https://b.example/early")
		early.EnqueuedAt = t0.Add(-time.Minute)
		enqueue(t, q, late)
		enqueue(t, q, early)
		enqueue(t, q, env("same", "https://b.example/s1", "https://b.example/s2"))
		var got []string
		for range 4 {
			got = append(got, inboxesOf(claim(t, q, t0, 1))...)
		}
		want := []string{"https://b.example/early", "https://b.example/late", "https://b.example/s1", "https://b.example/s2"}
		if !slices.Equal(got, want) {
			t.Fatalf("claim order %v, want %v", got, want)
		}
	})

	suite.Run(t, "Lanes", true, func(t testing.TB) {
		q := newQueue(t)
		low := env("low", "https://b.example/low")
		low.Lane = driver.LaneLow
		low.EnqueuedAt = t0.Add(-time.Hour) // due longest, still last
		normal := env("normal", "https://b.example/normal")
		normal.EnqueuedAt = t0.Add(-time.Minute)
		prio := env("prio", "https://b.example/prio")
		prio.Lane = driver.LanePriority
		enqueue(t, q, low)
		enqueue(t, q, normal)
		enqueue(t, q, prio)
		var got []string
		for range 3 {
			jobs := claim(t, q, t0, 1)
			got = append(got, inboxesOf(jobs)...)
		}
		want := []string{"https://b.example/prio", "https://b.example/normal", "https://b.example/low"}
		if !slices.Equal(got, want) {
			t.Fatalf("lane order %v, want %v", got, want)
		}
	})

	suite.Run(t, "LowLaneOnlyWhenNothingElseDue", true, func(t testing.TB) {
		q := newQueue(t)
		low := env("low", "https://b.example/low")
		low.Lane = driver.LaneLow
		normal := env("normal", "https://b.example/normal")
		normal.EnqueuedAt = t0.Add(time.Minute) // not yet due
		enqueue(t, q, low)
		enqueue(t, q, normal)
		got := inboxesOf(claim(t, q, t0, 10))
		if !slices.Equal(got, []string{"https://b.example/low"}) {
			t.Fatalf("claimed %v, want the low job when nothing else is due", got)
		}
	})

	suite.Run(t, "LeaseHoldsThenLapses", true, func(t testing.TB) {
		q := newQueue(t)
		enqueue(t, q, env("lease", "https://b.example/inbox"))
		first := claim(t, q, t0, 10)
		if len(first) != 1 {
			t.Fatalf("claimed %d, want 1", len(first))
		}
		if again := claim(t, q, t0.Add(lease-time.Second), 10); len(again) != 0 {
			t.Fatalf("leased job claimed again before its lease lapsed")
		}
		second := claim(t, q, t0.Add(lease), 10)
		if len(second) != 1 || second[0].ID != first[0].ID {
			t.Fatalf("lapsed lease: claimed %v, want job %d again", inboxesOf(second), first[0].ID)
		}
		if second[0].Token == first[0].Token {
			t.Fatalf("reclaim kept fencing token %d", first[0].Token)
		}
		err := q.Finish(ctx, first[0].Ref(), driver.Outcome{Result: driver.ResultDelivered, Attempts: 1})
		if !errors.Is(err, driver.ErrLeaseLost) {
			t.Fatalf("Finish with stale token: %v, want ErrLeaseLost", err)
		}
		finish(t, q, second[0], driver.Outcome{Result: driver.ResultDelivered, Attempts: 1})
		if s := status(t, q, "lease"); s.Pending != 0 || s.Delivered != 1 {
			t.Fatalf("status %+v, want 1 delivered", s)
		}
	})

	suite.Run(t, "FinishTwiceLosesLease", true, func(t testing.TB) {
		q := newQueue(t)
		enqueue(t, q, env("twice", "https://b.example/inbox"))
		j := claim(t, q, t0, 1)[0]
		finish(t, q, j, driver.Outcome{RetryAt: t0.Add(time.Minute), Attempts: 1})
		err := q.Finish(ctx, j.Ref(), driver.Outcome{Result: driver.ResultDelivered, Attempts: 2})
		if !errors.Is(err, driver.ErrLeaseLost) {
			t.Fatalf("second Finish of one claim: %v, want ErrLeaseLost", err)
		}
	})

	suite.Run(t, "RetryAt", true, func(t testing.TB) {
		q := newQueue(t)
		enqueue(t, q, env("retry", "https://b.example/inbox"))
		j := claim(t, q, t0, 1)[0]
		at := t0.Add(30 * time.Second)
		finish(t, q, j, driver.Outcome{Result: driver.ResultPending, RetryAt: at, Attempts: 1})
		if jobs := claim(t, q, at.Add(-time.Second), 10); len(jobs) != 0 {
			t.Fatalf("retried job claimed before RetryAt")
		}
		jobs := claim(t, q, at, 10)
		if len(jobs) != 1 || jobs[0].Attempts != 1 {
			t.Fatalf("claimed %d jobs (attempts %v), want 1 with Attempts 1", len(jobs), jobs)
		}
		if s := status(t, q, "retry"); s.Pending != 1 {
			t.Fatalf("status %+v, want 1 pending", s)
		}
	})

	suite.Run(t, "SettleCountsEachResult", true, func(t testing.TB) {
		q := newQueue(t)
		enqueue(t, q, env("settle", "https://b.example/1", "https://b.example/2", "https://b.example/3", "https://b.example/4", "https://b.example/5"))
		jobs := claim(t, q, t0, 10)
		if len(jobs) != 5 {
			t.Fatalf("claimed %d, want 5", len(jobs))
		}
		results := []driver.Result{driver.ResultDelivered, driver.ResultDelivered, driver.ResultFailed, driver.ResultGaveUp, driver.ResultSkipped}
		for i, j := range jobs {
			finish(t, q, j, driver.Outcome{Result: results[i], Attempts: 1})
		}
		want := driver.BatchStatus{Delivered: 2, Failed: 1, GaveUp: 1, Skipped: 1}
		if s := status(t, q, "settle"); s != want {
			t.Fatalf("status %+v, want %+v", s, want)
		}
		if jobs := claim(t, q, t0.Add(24*time.Hour), 10); len(jobs) != 0 {
			t.Fatalf("settled jobs claimed again")
		}
		if s := status(t, q, "no-such-tag"); s != (driver.BatchStatus{}) {
			t.Fatalf("unknown tag status %+v, want zero", s)
		}
	})

	suite.Run(t, "OrderingKeyHoldsSuccessor", true, func(t testing.TB) {
		q := newQueue(t)
		create := env("create", "https://b.example/inbox", "https://c.example/inbox")
		create.OrderingKey = "https://a.example/notes/1"
		del := env("delete", "https://b.example/inbox", "https://c.example/inbox")
		del.OrderingKey = "https://a.example/notes/1"
		enqueue(t, q, create)
		enqueue(t, q, del)
		jobs := claim(t, q, t0, 10)
		for _, j := range jobs {
			if j.Envelope.Tag != "create" {
				t.Fatalf("claimed %s to %s while its Create was queued", j.Envelope.Tag, j.Inbox)
			}
		}
		if len(jobs) != 2 {
			t.Fatalf("claimed %d, want both Creates", len(jobs))
		}
		var toB, toC *driver.Job
		for _, j := range jobs {
			if j.Inbox == "https://b.example/inbox" {
				toB = j
			} else {
				toC = j
			}
		}
		// The Create to b is retried later; its Delete must still wait, even
		// though the Delete is due sooner.
		finish(t, q, toB, driver.Outcome{RetryAt: t0.Add(time.Hour), Attempts: 1})
		finish(t, q, toC, driver.Outcome{Result: driver.ResultDelivered, Attempts: 1})
		got := claim(t, q, t0.Add(time.Minute), 10)
		if len(got) != 1 || got[0].Envelope.Tag != "delete" || got[0].Inbox != "https://c.example/inbox" {
			t.Fatalf("claimed %v, want only the Delete to c", describe(got))
		}
		finish(t, q, got[0], driver.Outcome{Result: driver.ResultDelivered, Attempts: 1})
		got = claim(t, q, t0.Add(time.Hour), 10)
		if len(got) != 1 || got[0].Envelope.Tag != "create" {
			t.Fatalf("claimed %v, want the retried Create to b", describe(got))
		}
		finish(t, q, got[0], driver.Outcome{Result: driver.ResultGaveUp, Attempts: 2})
		got = claim(t, q, t0.Add(time.Hour), 10)
		if len(got) != 1 || got[0].Envelope.Tag != "delete" || got[0].Inbox != "https://b.example/inbox" {
			t.Fatalf("claimed %v, want the Delete to b once its Create gave up", describe(got))
		}
	})

	suite.Run(t, "OrderingKeysIndependent", true, func(t testing.TB) {
		q := newQueue(t)
		a := env("a", "https://b.example/inbox")
		a.OrderingKey = "k1"
		b := env("b", "https://b.example/inbox")
		b.OrderingKey = "k2"
		c := env("c", "https://b.example/inbox") // no key: never waits
		enqueue(t, q, a)
		enqueue(t, q, b)
		enqueue(t, q, c)
		if got := claim(t, q, t0, 10); len(got) != 3 {
			t.Fatalf("claimed %v, want all three", describe(got))
		}
	})

	suite.Run(t, "OrderingSurvivesLeaseLapse", true, func(t testing.TB) {
		q := newQueue(t)
		a := env("first", "https://b.example/inbox")
		a.OrderingKey = "k"
		b := env("second", "https://b.example/inbox")
		b.OrderingKey = "k"
		enqueue(t, q, a)
		enqueue(t, q, b)
		claim(t, q, t0, 10)
		got := claim(t, q, t0.Add(lease), 10)
		if len(got) != 1 || got[0].Envelope.Tag != "first" {
			t.Fatalf("after a lapsed lease claimed %v, want the first again", describe(got))
		}
	})

	// The predecessor is claimed, not waiting for a retry: a backend whose
	// ordering check looks only at unclaimed predecessors would hand out the
	// successor while the predecessor is being delivered.
	suite.Run(t, "OrderingHoldsWhileClaimed", true, func(t testing.TB) {
		q := newQueue(t)
		a := env("create", "https://b.example/inbox")
		a.OrderingKey = "k"
		b := env("delete", "https://b.example/inbox")
		b.OrderingKey = "k"
		enqueue(t, q, a)
		enqueue(t, q, b)
		first := claim(t, q, t0, 1)
		if len(first) != 1 || first[0].Envelope.Tag != "create" {
			t.Fatalf("first claim %v, want the Create", describe(first))
		}
		if got := claim(t, q, t0, 10); len(got) != 0 {
			t.Fatalf("claimed %v while the Create is leased", describe(got))
		}
		if got := claim(t, q, t0.Add(lease-time.Second), 10); len(got) != 0 {
			t.Fatalf("claimed %v late in the Create's lease", describe(got))
		}
		finish(t, q, first[0], driver.Outcome{Result: driver.ResultDelivered, Attempts: 1})
		got := claim(t, q, t0, 10)
		if len(got) != 1 || got[0].Envelope.Tag != "delete" {
			t.Fatalf("claimed %v once the Create was delivered, want the Delete", describe(got))
		}
	})

	// A worker that stalled past its lease reports a retry after another
	// claimed the job: the retry must be refused like a settlement, or it
	// would release the new claim and reschedule a job being delivered.
	suite.Run(t, "LateRetryFenced", true, func(t testing.TB) {
		q := newQueue(t)
		enqueue(t, q, env("lateretry", "https://b.example/inbox"))
		stale := claim(t, q, t0, 1)
		if len(stale) != 1 {
			t.Fatalf("claimed %d, want 1", len(stale))
		}
		fresh := claim(t, q, t0.Add(lease), 1)
		if len(fresh) != 1 || fresh[0].ID != stale[0].ID || fresh[0].Token == stale[0].Token {
			t.Fatalf("re-claim after the lapse: %v, want job %d with a new token", fresh, stale[0].ID)
		}
		err := q.Finish(ctx, stale[0].Ref(), driver.Outcome{Result: driver.ResultPending, RetryAt: t0.Add(lease + time.Second), Attempts: 1})
		if !errors.Is(err, driver.ErrLeaseLost) {
			t.Fatalf("retry with the stale token: %v, want ErrLeaseLost", err)
		}
		// Still leased to the new claim: not claimable at the stale retry's
		// time, nor until the new lease lapses.
		if got := claim(t, q, t0.Add(lease+time.Second), 10); len(got) != 0 {
			t.Fatalf("claimed %v after a stale retry; the job should stay leased", describe(got))
		}
		if got := claim(t, q, t0.Add(2*lease-time.Second), 10); len(got) != 0 {
			t.Fatalf("claimed %v within the new lease", describe(got))
		}
		finish(t, q, fresh[0], driver.Outcome{Result: driver.ResultDelivered, Attempts: 1})
		if s := status(t, q, "lateretry"); s != (driver.BatchStatus{Delivered: 1}) {
			t.Fatalf("status %+v, want 1 delivered", s)
		}
	})

	suite.Run(t, "DropByActivityActorTag", true, func(t testing.TB) {
		q := newQueue(t)
		a := env("dropa", "https://b.example/1", "https://b.example/2")
		b := env("dropb", "https://b.example/1")
		b.ActorID = "https://a.example/users/bob"
		c := env("dropc", "https://b.example/1")
		c.ActorID = "https://a.example/users/carol"
		for _, e := range []*driver.Envelope{a, b, c} {
			enqueue(t, q, e)
		}
		if _, err := q.Drop(ctx, driver.DropFilter{}); !errors.Is(err, driver.ErrEmptyDropFilter) {
			t.Fatalf("Drop(empty): %v, want ErrEmptyDropFilter", err)
		}
		claimed := claim(t, q, t0, 1) // a claimed job is dropped too
		n, err := q.Drop(ctx, driver.DropFilter{ActivityID: a.ActivityID})
		if err != nil || n != 2 {
			t.Fatalf("Drop(activity) = %d, %v; want 2", n, err)
		}
		if err := q.Finish(ctx, claimed[0].Ref(), driver.Outcome{Result: driver.ResultDelivered, Attempts: 1}); !errors.Is(err, driver.ErrLeaseLost) {
			t.Fatalf("Finish of a dropped job: %v, want ErrLeaseLost", err)
		}
		n, err = q.Drop(ctx, driver.DropFilter{ActorID: b.ActorID})
		if err != nil || n != 1 {
			t.Fatalf("Drop(actor) = %d, %v; want 1", n, err)
		}
		n, err = q.Drop(ctx, driver.DropFilter{Tag: "dropc", ActorID: "https://a.example/users/nobody"})
		if err != nil || n != 0 {
			t.Fatalf("Drop(tag, other actor) = %d, %v; want 0", n, err)
		}
		n, err = q.Drop(ctx, driver.DropFilter{Tag: "dropc"})
		if err != nil || n != 1 {
			t.Fatalf("Drop(tag) = %d, %v; want 1", n, err)
		}
		if got := claim(t, q, t0.Add(24*time.Hour), 10); len(got) != 0 {
			t.Fatalf("dropped jobs claimed: %v", describe(got))
		}
		if s := status(t, q, "dropa"); s.Pending != 0 || s.Dropped != 2 {
			t.Fatalf("status %+v, want 2 dropped", s)
		}
	})

	suite.Run(t, "DropLetsSuccessorThrough", true, func(t testing.TB) {
		q := newQueue(t)
		a := env("create", "https://b.example/inbox")
		a.OrderingKey = "k"
		b := env("delete", "https://b.example/inbox")
		b.OrderingKey = "k"
		enqueue(t, q, a)
		enqueue(t, q, b)
		if _, err := q.Drop(ctx, driver.DropFilter{Tag: "create"}); err != nil {
			t.Fatal(err)
		}
		got := claim(t, q, t0, 10)
		if len(got) != 1 || got[0].Envelope.Tag != "delete" {
			t.Fatalf("claimed %v, want the Delete after its Create was dropped", describe(got))
		}
	})

	suite.Run(t, "ConcurrentClaimsNeverShareAJob", true, func(t testing.TB) {
		q := newQueue(t)
		var inboxes []string
		for i := range 60 {
			inboxes = append(inboxes, fmt.Sprintf("https://h%d.example/inbox", i))
		}
		enqueue(t, q, env("conc", inboxes...))
		var mu sync.Mutex
		seen := map[int64]int{}
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				for {
					jobs, err := q.Claim(ctx, driver.ClaimOpts{Now: t0, Lease: lease, Limit: 4})
					if err != nil {
						t.Errorf("Claim: %v", err)
						return
					}
					if len(jobs) == 0 {
						return
					}
					mu.Lock()
					for _, j := range jobs {
						seen[j.ID]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(seen) != 60 {
			t.Errorf("claimed %d distinct jobs, want 60", len(seen))
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("job %d claimed %d times", id, n)
			}
		}
	})
}

func describe(jobs []*driver.Job) []string {
	var s []string
	for _, j := range jobs {
		s = append(s, j.Envelope.Tag+"->"+j.Inbox)
	}
	return s
}
