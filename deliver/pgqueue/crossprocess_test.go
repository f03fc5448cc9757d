package pgqueue_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/internal/pgtest"
)

// Two queues on pools of their own stand for two processes. A keyed job
// waits while its predecessor is claimed by the other process, held in an
// open claim transaction there, or waiting for a retry; a process that
// finishes after its lease lapsed and the other re-claimed the job changes
// nothing.
func TestOrderingAndFencingAcrossProcesses(t *testing.T) {
	cs := pgtest.ConnString(t)
	pool := openPool(t, cs, nil)
	a, b := migrated(t, pool, nil), openQueue(t, cs, nil)
	ctx := context.Background()
	const inbox = "https://b.example/inbox"
	for _, tag := range []string{"create", "delete"} {
		e := env(tag, inbox)
		e.OrderingKey = "https://a.example/notes/1"
		if err := a.Enqueue(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	tags := func(jobs []*driver.Job) []string {
		var s []string
		for _, j := range jobs {
			s = append(s, j.Envelope.Tag)
		}
		return s
	}

	// A claim statement still running in A: its row lock is held, so B's
	// SKIP LOCKED passes the Create over, and must not take the Delete.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1 FROM fedkit_delivery_jobs WHERE id = (SELECT min(id) FROM fedkit_delivery_jobs) FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	got := claim(t, b, t0, 10)
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("B claimed %v while A was claiming the Create", tags(got))
	}

	create := claim(t, a, t0, 1)
	if len(create) != 1 || create[0].Envelope.Tag != "create" {
		t.Fatalf("A claimed %v, want the Create", tags(create))
	}
	if got := claim(t, b, t0, 10); len(got) != 0 {
		t.Fatalf("B claimed %v while A holds the Create", tags(got))
	}
	if err := a.Finish(ctx, create[0].Ref(), driver.Outcome{RetryAt: t0.Add(time.Minute), Attempts: 1}); err != nil {
		t.Fatal(err)
	}
	if got := claim(t, b, t0.Add(time.Second), 10); len(got) != 0 {
		t.Fatalf("B claimed %v while the Create waits for its retry", tags(got))
	}

	// A re-claims at the retry and stalls past its lease; B takes the job.
	stale := claim(t, a, t0.Add(time.Minute), 1)
	fresh := claim(t, b, t0.Add(2*time.Minute), 10)
	if len(stale) != 1 || len(fresh) != 1 || fresh[0].ID != stale[0].ID {
		t.Fatalf("A re-claimed %v, then B after the lapse %v; want the Create both times", tags(stale), tags(fresh))
	}
	// A's late outcomes, a retry and a settlement, are both refused and
	// leave B's claim as it was.
	for _, o := range []driver.Outcome{
		{RetryAt: t0.Add(time.Hour), Attempts: 2},
		{Result: driver.ResultDelivered, Attempts: 2},
	} {
		if err := a.Finish(ctx, stale[0].Ref(), o); !errors.Is(err, driver.ErrLeaseLost) {
			t.Fatalf("A's late Finish(%v): %v, want ErrLeaseLost", o.Result, err)
		}
	}
	if got := claim(t, a, t0.Add(2*time.Minute), 10); len(got) != 0 {
		t.Fatalf("A claimed %v while B holds the Create", tags(got))
	}
	if s, err := a.Status(ctx, "create"); err != nil || s.Delivered != 0 || s.Pending != 1 {
		t.Fatalf("Create's status after A's late outcomes: %+v, %v; want still pending", s, err)
	}
	if err := b.Finish(ctx, fresh[0].Ref(), driver.Outcome{Result: driver.ResultDelivered, Attempts: 2}); err != nil {
		t.Fatalf("B's Finish after A's late ones: %v", err)
	}
	if got := claim(t, a, t0.Add(2*time.Minute), 10); len(got) != 1 || got[0].Envelope.Tag != "delete" {
		t.Fatalf("A claimed %v once the Create was delivered, want the Delete", tags(got))
	}
}

// Workers in two processes race over keyed sends to a few inboxes; each
// inbox still sees them in the order they were queued.
func TestOrderingUnderConcurrentWorkers(t *testing.T) {
	cs := pgtest.ConnString(t)
	qs := []driver.Queue{openQueue(t, cs, nil), openQueue(t, cs, nil)}
	ctx := context.Background()
	inboxes := []string{"https://b.example/inbox", "https://c.example/inbox", "https://d.example/inbox"}
	const sends = 8
	for i := range sends {
		e := env(fmt.Sprint("s", i), inboxes...)
		e.OrderingKey = "k"
		if err := qs[i%2].Enqueue(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string][]string{}
	var wg sync.WaitGroup
	for w := range 6 {
		q := qs[w%2]
		wg.Go(func() {
			for idle := 0; idle < 50; {
				jobs, err := q.Claim(ctx, driver.ClaimOpts{Now: t0, Lease: time.Hour, Limit: 2})
				if err != nil {
					t.Error(err)
					return
				}
				if len(jobs) == 0 {
					idle++
					time.Sleep(time.Millisecond) // let another worker's claim commit
					continue
				}
				idle = 0
				for _, j := range jobs {
					mu.Lock()
					seen[j.Inbox] = append(seen[j.Inbox], j.Envelope.Tag)
					mu.Unlock()
					if err := q.Finish(ctx, j.Ref(), driver.Outcome{Result: driver.ResultDelivered, Attempts: 1}); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	var want []string
	for i := range sends {
		want = append(want, fmt.Sprint("s", i))
	}
	for _, in := range inboxes {
		if !slices.Equal(seen[in], want) {
			t.Errorf("%s received %v, want %v", in, seen[in], want)
		}
	}
}
