package deliver_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
)

// These tests run Run's timers (poll interval, grace period, breaker
// cool-off, retry delays) on synctest's fake clock. A bubble's clock only
// moves when every goroutine in it is durably blocked, and a goroutine in a
// network read is not, so:
//   - inboxes live outside the bubble (their accept loops would pin the
//     clock) and answer with Connection: close (so would an idle keep-alive
//     connection's read loop);
//   - a delivery that must stay in flight while time passes is stuck in
//     name resolution on stuckResolver, which blocks on a channel, durably,
//     rather than in a socket read.

// bubbleEpoch is where a synctest bubble's clock starts.
var bubbleEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// stuckResolver does not answer for names ending in ".stuck" until release
// is closed; it sends every other name to 127.0.0.1. entered receives each
// name it is asked for.
type stuckResolver struct{ entered, release chan struct{} }

// newStuckResolver returns a stuckResolver released at the end of t: the
// transport goes on dialling after a request is cancelled, and a bubble
// must end with none of its goroutines blocked.
func newStuckResolver(t *testing.T) stuckResolver {
	r := stuckResolver{entered: make(chan struct{}, 64), release: make(chan struct{})}
	t.Cleanup(func() { close(r.release) })
	return r
}

func (r stuckResolver) LookupNetIP(ctx context.Context, _, host string) ([]netip.Addr, error) {
	if strings.HasSuffix(host, ".stuck") {
		r.entered <- struct{}{}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-r.release:
			return nil, errors.New("released")
		}
	}
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// bubbleClient is a client for use inside a bubble: built there, so its
// connections' goroutines belong to the bubble, with timeouts well past
// the tests' grace periods so only the Deliverer cuts a delivery off.
func bubbleClient(t *testing.T, r stuckResolver) *client.Client {
	t.Helper()
	c, err := client.New(&client.Config{
		AllowPrivate:   []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Resolver:       r,
		ResolveTimeout: 24 * time.Hour,
		Timeout:        24 * time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// bubbleInbox is an inbox for a bubble's deliveries: made outside the
// bubble, verifying signatures against the bubble's starting time.
func bubbleInbox(t *testing.T, respond func(r *http.Request, n int) (int, http.Header)) *inbox {
	ib := newInbox(t, &clock{now: bubbleEpoch}, respond)
	ib.closeConns.Store(true)
	return ib
}

// hooks records a Deliverer's attempts with the bubble time of each.
type hooks struct {
	mu       sync.Mutex
	attempts []deliver.Attempt
	at       []time.Time
}

func (h *hooks) onAttempt(_ context.Context, a deliver.Attempt) {
	h.mu.Lock()
	h.attempts = append(h.attempts, a)
	h.at = append(h.at, time.Now())
	h.mu.Unlock()
}

func TestRunDeliversWhatIsSent(t *testing.T) {
	ib := bubbleInbox(t, nil)
	synctest.Test(t, func(t *testing.T) {
		q := &deliver.MemoryQueue{}
		d, err := deliver.New(q, &keys{}, bubbleClient(t, stuckResolver{}), &deliver.Config{PollInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		stop := startRun(t, d)
		synctest.Wait() // Run is idle, waiting out its hour-long poll
		start := time.Now()
		if err := d.SendBatch(context.Background(), testKeyID, activity("1"), []string{ib.URL("/a"), ib.URL("/b")}, deliver.Batch{Tag: "run"}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		st, _ := d.Status(context.Background(), "run")
		if st != (driver.BatchStatus{Delivered: 2}) {
			t.Fatalf("status %+v, want both delivered", st)
		}
		if waited := time.Since(start); waited != 0 {
			t.Fatalf("delivered after %v: Send did not wake Run, the poll did", waited)
		}
		for _, r := range ib.requests() {
			if r.VerifyErr != nil {
				t.Fatalf("inbox refused the signature: %v", r.VerifyErr)
			}
		}
		stop()
	})
}

func TestRunPollsForRetries(t *testing.T) {
	ib := bubbleInbox(t, func(_ *http.Request, n int) (int, http.Header) {
		if n == 1 {
			return http.StatusServiceUnavailable, nil
		}
		return http.StatusAccepted, nil
	})
	synctest.Test(t, func(t *testing.T) {
		h := &hooks{}
		d, err := deliver.New(&deliver.MemoryQueue{}, &keys{}, bubbleClient(t, stuckResolver{}),
			&deliver.Config{PollInterval: 10 * time.Second, OnAttempt: h.onAttempt})
		if err != nil {
			t.Fatal(err)
		}
		stop := startRun(t, d)
		if err := d.Send(context.Background(), testKeyID, activity("1"), []string{ib.URL("/inbox")}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute) // fake time: the retry is due after 30 s
		synctest.Wait()
		stop()
		h.mu.Lock()
		defer h.mu.Unlock()
		if len(h.attempts) != 2 || h.attempts[1].Outcome != deliver.AttemptDelivered {
			t.Fatalf("attempts %+v, want a failure then a delivery", h.attempts)
		}
		// Due 30 s after the failure; Run finds it at its next 10 s poll.
		if gap := h.at[1].Sub(h.at[0]); gap != 30*time.Second {
			t.Fatalf("retried after %v, want the policy's 30 s", gap)
		}
	})
}

func TestRunShutdownGraceBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newStuckResolver(t)
		q := &finishLog{MemoryQueue: &deliver.MemoryQueue{}}
		breakers := &deliver.MemoryBreakerStore{}
		h := &hooks{}
		d, err := deliver.New(q, &keys{}, bubbleClient(t, r), &deliver.Config{
			Breaker:   &deliver.BreakerConfig{Threshold: 1, Store: breakers},
			OnAttempt: h.onAttempt,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.SendBatch(context.Background(), testKeyID, activity("1"), []string{"https://inbox.stuck/inbox"}, deliver.Batch{Tag: "grace"}); err != nil {
			t.Fatal(err)
		}
		stop := startRun(t, d)
		<-r.entered // in flight, and never answered
		stopped := time.Now()
		stop()
		if waited := time.Since(stopped); waited != deliver.ShutdownGraceDefault {
			t.Fatalf("Run returned %v after its context ended, want the grace period %v", waited, deliver.ShutdownGraceDefault)
		}
		// Cut off by the shutdown, it goes back to the queue due at once,
		// with no attempt counted and no breaker failure (threshold 1).
		st, _ := q.Status(context.Background(), "grace")
		if st != (driver.BatchStatus{Pending: 1}) {
			t.Fatalf("status %+v, want the cut-off delivery still queued", st)
		}
		q.mu.Lock()
		log := append([]driver.Outcome(nil), q.log...)
		q.mu.Unlock()
		if want := (driver.Outcome{RetryAt: time.Now(), Attempts: 0}); len(log) != 1 || log[0] != want {
			t.Fatalf("outcomes %+v, want [%+v]", log, want)
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if len(h.attempts) != 0 {
			t.Fatalf("attempts reported %+v, want none for a cut-off delivery", h.attempts)
		}
		adm, _ := breakers.Admit(context.Background(), "inbox.stuck", time.Now(), driver.BreakerRule{Threshold: 1, CoolOff: time.Minute})
		if !adm.Allow || adm.Probe {
			t.Fatalf("admission %+v: the cut-off counted as a breaker failure", adm)
		}
	})
}

func TestRunDueCancelCutsOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newStuckResolver(t)
		q := &finishLog{MemoryQueue: &deliver.MemoryQueue{}}
		d, err := deliver.New(q, &keys{}, bubbleClient(t, r), nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if err := d.Send(ctx, testKeyID, activity("1"), []string{"https://inbox.stuck/inbox"}); err != nil {
			t.Fatal(err)
		}
		go func() { <-r.entered; cancel() }()
		if n, err := d.RunDue(ctx); !errors.Is(err, context.Canceled) || n != 1 {
			t.Fatalf("RunDue = %d, %v; want 1, context.Canceled", n, err)
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		if want := (driver.Outcome{RetryAt: time.Now()}); len(q.log) != 1 || q.log[0] != want {
			t.Fatalf("outcomes %+v, want [%+v]", q.log, want)
		}
	})
}

func TestRunBreakerCoolOffThenProbe(t *testing.T) {
	const threshold = 3
	ib := bubbleInbox(t, func(_ *http.Request, n int) (int, http.Header) {
		if n <= threshold {
			return http.StatusServiceUnavailable, nil
		}
		return http.StatusAccepted, nil
	})
	synctest.Test(t, func(t *testing.T) {
		h := &hooks{}
		d, err := deliver.New(&deliver.MemoryQueue{}, &keys{}, bubbleClient(t, stuckResolver{}), &deliver.Config{
			Breaker:   &deliver.BreakerConfig{Threshold: threshold},
			Retry:     deliver.ExponentialRetry(time.Second, time.Second, 100),
			OnAttempt: h.onAttempt,
		})
		if err != nil {
			t.Fatal(err)
		}
		stop := startRun(t, d)
		if err := d.Send(context.Background(), testKeyID, activity("1"), []string{ib.URL("/inbox")}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		stop()
		h.mu.Lock()
		defer h.mu.Unlock()
		var outcomes []string
		for _, a := range h.attempts {
			outcomes = append(outcomes, a.Outcome.String())
		}
		// Three failures a second apart open the breaker; the retry a
		// second later is held; the next waits out the cool-off (not the
		// policy's 1 s) and goes through as the probe, which closes it.
		want := "failed failed failed held delivered"
		if strings.Join(outcomes, " ") != want {
			t.Fatalf("outcomes %v, want %s", outcomes, want)
		}
		opened, held, probe := h.at[2], h.at[3], h.at[4]
		if held.Sub(opened) != time.Second {
			t.Fatalf("held %v after the breaker opened, want the policy's 1 s", held.Sub(opened))
		}
		if probe.Sub(opened) != deliver.BreakerCoolOffDefault || !h.attempts[4].Probe {
			t.Fatalf("probe %+v at %v after opening, want a probe after the %v cool-off",
				h.attempts[4], probe.Sub(opened), deliver.BreakerCoolOffDefault)
		}
		if n := len(ib.requests()); n != threshold+1 {
			t.Fatalf("%d requests, want %d: none while the breaker was open", n, threshold+1)
		}
	})
}

func TestRunBusyHostDoesNotStarveOthers(t *testing.T) {
	fast := bubbleInbox(t, nil)
	synctest.Test(t, func(t *testing.T) {
		r := newStuckResolver(t)
		d, err := deliver.New(&deliver.MemoryQueue{}, &keys{}, bubbleClient(t, r),
			&deliver.Config{Concurrency: 2, PerHost: 1})
		if err != nil {
			t.Fatal(err)
		}
		var slow []string
		for i := range 6 {
			slow = append(slow, fmt.Sprintf("https://slow.stuck/%d", i))
		}
		ctx := context.Background()
		if err := d.Send(ctx, testKeyID, activity("1"), slow); err != nil {
			t.Fatal(err)
		}
		if err := d.SendBatch(ctx, testKeyID, activity("2"), []string{fast.URL("/inbox")}, deliver.Batch{Tag: "fast"}); err != nil {
			t.Fatal(err)
		}
		stop := startRun(t, d)
		// Both of Run's slots first go to the slow host, which never
		// answers; the delivery waiting for the host's single slot lends
		// its Run slot back, so the fast host is reached at once.
		synctest.Wait()
		if st, _ := d.Status(ctx, "fast"); st.Delivered != 1 {
			t.Fatalf("fast host: %+v, want delivered while the slow host hangs", st)
		}
		if n := len(r.entered); n != 1 {
			t.Fatalf("%d deliveries in flight to the slow host, want its limit of 1", n)
		}
		stop()
	})
}

func TestRunWakesOnQueueNotifications(t *testing.T) {
	ib := bubbleInbox(t, nil)
	synctest.Test(t, func(t *testing.T) {
		q := &notifyingQueue{MemoryQueue: &deliver.MemoryQueue{}, enqueued: make(chan struct{})}
		d, err := deliver.New(q, &keys{}, bubbleClient(t, stuckResolver{}), &deliver.Config{PollInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		stop := startRun(t, d)
		synctest.Wait() // Run is idle, waiting out its hour-long poll
		// Another process enqueues straight into the shared queue.
		err = q.Enqueue(context.Background(), &driver.Envelope{KeyID: testKeyID, Body: activity("1"),
			Inboxes: []string{ib.URL("/inbox")}, EnqueuedAt: time.Now(), Tag: "elsewhere"})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case q.enqueued <- struct{}{}:
		default:
			t.Fatal("Run is not listening for the queue's notifications")
		}
		synctest.Wait()
		if st, _ := q.Status(context.Background(), "elsewhere"); st.Delivered != 1 {
			t.Fatalf("status %+v: the notification did not wake Run", st)
		}
		stop()
	})
}

func TestRunSurvivesClaimErrors(t *testing.T) {
	ib := bubbleInbox(t, nil)
	synctest.Test(t, func(t *testing.T) {
		q := &flakyQueue{MemoryQueue: &deliver.MemoryQueue{}}
		d, err := deliver.New(q, &keys{}, bubbleClient(t, stuckResolver{}), &deliver.Config{PollInterval: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		stop := startRun(t, d)
		synctest.Wait() // the first Claim failed; Run waits for its next poll
		if !q.failed.Load() {
			t.Fatal("the failing Claim was never made")
		}
		if err := d.SendBatch(context.Background(), testKeyID, activity("1"), []string{ib.URL("/inbox")}, deliver.Batch{Tag: "flaky"}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if st, _ := d.Status(context.Background(), "flaky"); st.Delivered != 1 {
			t.Fatalf("status %+v, want delivered after a failed claim", st)
		}
		stop()
	})
}
