package deliver_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/delivertest"
	"github.com/fedkit/fedkit/deliver/driver"
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
	release() // only after the stop, so none of the three can start
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := len(ib.requests()); n != 1 {
		t.Fatalf("%d requests, want only the one in flight", n)
	}
	st, _ := b.d.Status(context.Background(), "shut")
	if st != (driver.BatchStatus{Delivered: 1, Pending: 3}) {
		t.Fatalf("status %+v, want 1 delivered and 3 left queued", st)
	}
	// The rest are claimable at once, with no attempt counted.
	jobs, err := b.q.Claim(context.Background(), driver.ClaimOpts{Now: b.clock.Now(), Lease: time.Minute, Limit: 10})
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
	ib, arrivals := orderingInbox(t, b.clock, 1)
	key := "https://a.example/notes/9"
	b.sendBatch(t, "create", deliver.Batch{OrderingKey: key}, ib.URL("/inbox"))
	if err := other.SendBatch(context.Background(), testKeyID, deleteActivity("delete"), []string{ib.URL("/inbox")}, deliver.Batch{OrderingKey: key}); err != nil {
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
	if got := arrivals(); !slices.Equal(got, []string{"create", "create", "delete"}) {
		t.Fatalf("arrival order %v, want the retried Create before the Delete", got)
	}
}

// finishLog records every Finish a Deliverer makes.
type finishLog struct {
	*deliver.MemoryQueue
	mu  sync.Mutex
	log []driver.Outcome
}

func (q *finishLog) Finish(ctx context.Context, ref driver.JobRef, o driver.Outcome) error {
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
	delivered := driver.Outcome{Result: driver.ResultDelivered, Attempts: 1}
	q.mu.Lock()
	got := append([]driver.Outcome(nil), q.log...)
	q.mu.Unlock()
	// Given back due at once: RetryAt is whenever its handling began,
	// before or after the clock moved.
	givenBack := func(o driver.Outcome) bool {
		return o.Result == driver.ResultPending && o.Attempts == 0 && !o.RetryAt.After(clk.Now())
	}
	if len(got) != 3 || got[0] != delivered || !givenBack(got[1]) || got[2] != delivered {
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

var _ driver.Notifier = (*notifyingQueue)(nil)

func (q *notifyingQueue) Notify(ctx context.Context, _ func() time.Time, wake func()) error {
	for {
		select {
		case <-q.enqueued:
			wake()
		case <-ctx.Done():
			return nil
		}
	}
}

// claimCounter records the Limit of every Claim.
type claimCounter struct {
	*deliver.MemoryQueue
	mu     sync.Mutex
	limits []int
}

func (q *claimCounter) Claim(ctx context.Context, opts driver.ClaimOpts) ([]*driver.Job, error) {
	q.mu.Lock()
	q.limits = append(q.limits, opts.Limit)
	q.mu.Unlock()
	return q.MemoryQueue.Claim(ctx, opts)
}

// TestRunClaimsByHalves: Run claims once half the signers' line (16 per
// core) is free, never for the one or two deliveries signed since its last
// claim; against pgqueue each claim is a statement on the cores the
// signers use.
func TestRunClaimsByHalves(t *testing.T) {
	t.Parallel()
	q := &claimCounter{MemoryQueue: &deliver.MemoryQueue{}}
	clk := newClock()
	rec := &delivertest.Recorder{}
	cfg := deliver.DefaultConfig()
	cfg.Now = clk.Now
	cfg.PerHost = 1000 // no delivery waits for its host: only signing moves the line
	rec.Install(cfg)
	d, err := deliver.New(q, &keys{}, testClient(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ib := newInbox(t, clk, nil)
	var inboxes []string
	for i := range 300 {
		inboxes = append(inboxes, ib.URL(fmt.Sprintf("/%d", i)))
	}
	if err := d.SendBatch(context.Background(), testKeyID, activity("1"), inboxes, deliver.Batch{}); err != nil {
		t.Fatal(err)
	}
	stop := startRun(t, d)
	deadline := time.Now().Add(30 * time.Second)
	for rec.Results()[driver.ResultDelivered] < len(inboxes) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	if n := rec.Results()[driver.ResultDelivered]; n != len(inboxes) {
		t.Fatalf("%d of %d delivered", n, len(inboxes))
	}
	half := 8 * runtime.GOMAXPROCS(0)
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, l := range q.limits {
		if l < half {
			t.Fatalf("claim %d of %d asked for %d (all: %v); want at least %d, half the line", i+1, len(q.limits), l, q.limits, half)
		}
	}
}
