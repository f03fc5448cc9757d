package deliver_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
)

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

func TestOrderingHoldsAcrossDeliverersSharingAQueue(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	other, err := deliver.New(b.q, b.keys, testClient(t), b.cfg) // a second process on the same queue
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	creates := 0
	ib := newInbox(t, b.clock, nil)
	ib.respond = func(r *http.Request, n int) (int, http.Header) {
		mu.Lock()
		defer mu.Unlock()
		got := ib.requests()
		if strings.Contains(got[len(got)-1].Body, `"Delete"`) {
			order = append(order, "delete")
			return 202, nil
		}
		creates++
		order = append(order, "create")
		if creates < 2 {
			return 500, nil
		}
		return 202, nil
	}
	key := "https://a.example/notes/9"
	b.sendBatch(t, "create", deliver.Batch{OrderingKey: key}, ib.URL("/inbox"))
	del := strings.Replace(string(activity("delete")), `"Create"`, `"Delete"`, 1)
	if err := other.SendBatch(context.Background(), testKeyID, []byte(del), []string{ib.URL("/inbox")}, deliver.Batch{OrderingKey: key}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		var wg sync.WaitGroup
		wg.Go(func() { b.runDue(t) })
		wg.Go(func() {
			if _, err := other.RunDue(context.Background()); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		b.clock.Advance(time.Hour)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(order, []string{"create", "create", "delete"}) {
		t.Fatalf("arrival order %v", order)
	}
}

// finishLog records every Finish a Deliverer makes.
type finishLog struct {
	*deliver.MemoryQueue
	mu  sync.Mutex
	log []deliver.Outcome
}

func (q *finishLog) Finish(ctx context.Context, ref deliver.JobRef, o deliver.Outcome) error {
	q.mu.Lock()
	q.log = append(q.log, o)
	q.mu.Unlock()
	return q.MemoryQueue.Finish(ctx, ref, o)
}

func TestLeaseLapsedWhileWaitingNotSent(t *testing.T) {
	t.Parallel()
	clk := newClock()
	q := &finishLog{MemoryQueue: &deliver.MemoryQueue{}}
	d, err := deliver.New(q, &keys{}, testClient(t), &deliver.Config{Now: clk.Now, PerHost: 1, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ib := newInbox(t, clk, nil)
	release := ib.hold(t)
	if err := d.Send(context.Background(), testKeyID, activity("1"), []string{ib.URL("/first"), ib.URL("/second")}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { d.RunDue(context.Background()); close(done) }()
	<-ib.entered
	clk.Advance(2 * time.Minute) // /second's lease lapses while /first holds the slot
	release()
	<-done
	// /first delivered; /second given back unsent with no attempt counted,
	// then sent on a fresh claim.
	delivered := deliver.Outcome{Result: deliver.ResultDelivered, Attempts: 1}
	givenBack := deliver.Outcome{Result: deliver.ResultPending, RetryAt: newClock().Now(), Attempts: 0}
	q.mu.Lock()
	got := append([]deliver.Outcome(nil), q.log...)
	q.mu.Unlock()
	if len(got) != 3 || got[0] != delivered || got[1] != givenBack || got[2] != delivered {
		t.Fatalf("outcomes %+v, want the lapsed claim given back before any send", got)
	}
	if n := len(ib.requests()); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}

// notifyingQueue stands for a queue shared with other processes that
// announces their enqueues (as LISTEN/NOTIFY does).
type notifyingQueue struct {
	*deliver.MemoryQueue
	enqueued chan struct{}
}

func (q *notifyingQueue) Notify(ctx context.Context, wake func()) error {
	for {
		select {
		case <-q.enqueued:
			wake()
		case <-ctx.Done():
			return nil
		}
	}
}

func TestRunWakesOnQueueNotifications(t *testing.T) {
	t.Parallel()
	clk := newClock()
	q := &notifyingQueue{MemoryQueue: &deliver.MemoryQueue{}, enqueued: make(chan struct{})}
	d, err := deliver.New(q, &keys{}, testClient(t), &deliver.Config{Now: clk.Now, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ib := newInbox(t, clk, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	// Another process enqueues straight into the shared queue.
	err = q.Enqueue(context.Background(), &deliver.Envelope{KeyID: testKeyID, Body: activity("1"),
		Inboxes: []string{ib.URL("/inbox")}, EnqueuedAt: clk.Now(), Tag: "elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case q.enqueued <- struct{}{}:
	case <-time.After(10 * time.Second):
		t.Fatal("Run never listened for the queue's notifications")
	}
	waitFor(t, func() bool {
		st, _ := q.Status(context.Background(), "elsewhere")
		return st.Delivered == 1
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestRunBusyHostDoesNotStarveOthers(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *deliver.Config) {
		c.Concurrency = 2
		c.PerHost = 1
		c.PollInterval = 5 * time.Millisecond
		c.ShutdownGrace = 10 * time.Millisecond
	})
	slow := newInbox(t, b.clock, nil)
	slow.hold(t) // the slow host never answers while the test runs
	fast := newInbox(t, b.clock, nil)
	var inboxes []string
	for i := range 6 {
		inboxes = append(inboxes, slow.URL(fmt.Sprintf("/%d", i)))
	}
	b.send(t, "1", inboxes...)
	b.sendBatch(t, "2", deliver.Batch{Tag: "fast"}, fast.URL("/inbox"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- b.d.Run(ctx) }()
	// Both of Run's slots first go to the slow host; the one waiting for
	// the host's single slot lends its slot back, so the fast host is reached.
	waitFor(t, func() bool {
		st, _ := b.d.Status(context.Background(), "fast")
		return st.Delivered == 1
	})
	if n := len(slow.requests()); n != 1 {
		t.Fatalf("%d requests in flight to the slow host, want its limit of 1", n)
	}
	cancel()
	if err := <-done; err != nil { // cuts the slow request off after the grace period
		t.Fatal(err)
	}
}
