package pgqueue_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/pgqueue"
	"github.com/fedkit/fedkit/internal/pgtest"
	"github.com/fedkit/fedkit/internal/testserver"
)

// restartInboxes is the 10,000 deliveries, a quarter of them under
// the race detector, which makes the run four times as slow (70 s for
// 10,000), and CI runs it twice.
var restartInboxes = map[bool]int{false: 10000, true: 2500}[raceEnabled]

// Sizes of the restart test: 500 hosts, the server killed at 30% and at 65%
// of the deliveries.
const (
	restartHosts = 500
	restartConc  = 32
	// restartLease is far longer than a delivery: no lease lapses by
	// itself, so every duplicate is the outage's. After each restart the
	// deliverer's clock jumps a lease ahead, so the jobs in flight at the
	// kill come back at once instead of a lease later.
	restartLease = time.Minute
)

// outstanding wraps the queue to track claimed jobs whose outcome was not
// recorded: the deliveries in flight, which a crash may send twice.
type outstanding struct {
	*pgqueue.Queue
	mu     sync.Mutex
	claims map[driver.JobRef]bool
}

func (q *outstanding) Claim(ctx context.Context, o driver.ClaimOpts) ([]*driver.Job, error) {
	jobs, err := q.Queue.Claim(ctx, o)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.claims == nil {
		q.claims = map[driver.JobRef]bool{}
	}
	for _, j := range jobs {
		q.claims[j.Ref()] = true
	}
	return jobs, err
}

func (q *outstanding) Finish(ctx context.Context, ref driver.JobRef, o driver.Outcome) error {
	err := q.Queue.Finish(ctx, ref, o)
	if err == nil || errors.Is(err, driver.ErrLeaseLost) {
		q.mu.Lock()
		delete(q.claims, ref)
		q.mu.Unlock()
	}
	return err
}

// inFlight returns how many claims are open and forgets them: after a
// kill, they are the deliveries the outage may duplicate, and the claims
// died with the server (the jobs come back under new ones).
func (q *outstanding) inFlight() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.claims)
	clear(q.claims)
	return n
}

// logCount counts log records by level and message.
type logCount struct {
	mu sync.Mutex
	n  map[string]int
}

func (l *logCount) Enabled(context.Context, slog.Level) bool { return true }
func (l *logCount) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == nil {
		l.n = map[string]int{}
	}
	l.n[r.Level.String()+" "+r.Message]++
	return nil
}
func (l *logCount) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logCount) WithGroup(string) slog.Handler      { return l }
func (l *logCount) count(prefix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for k, v := range l.n {
		if strings.HasPrefix(k, prefix) {
			n += v
		}
	}
	return n
}

// The Postgres server is killed -9 twice during a 10,000-inbox fan-out
// and restarted on its port and data. Nothing is lost: every inbox is
// reached and the batch counts every delivery once. With DurableClaims a
// delivery is sent twice only if it was in flight at a kill; without it,
// commits the crash forgot add duplicates, counted here. Through each
// outage the Deliverer keeps running, backing off with one error line per
// outage; Send, Status and Depth fail with driver.ErrQueueUnavailable
// while the server is away and answer once it is back.
func TestPostgresRestartMidFanout(t *testing.T) {
	srv := pgtest.Server(t)
	for _, durable := range []bool{true, false} {
		t.Run(fmt.Sprintf("DurableClaims=%v", durable), func(t *testing.T) {
			restartMidFanout(t, srv, durable)
		})
	}
}

func restartMidFanout(t *testing.T, srv *testserver.Server, durable bool) {
	start := time.Now()
	prefix := "restart_" + map[bool]string{true: "durable_", false: "async_"}[durable]
	var skew atomic.Int64 // the clock's jump past leases, one per restart
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	pool := restartPool(t, srv.URL)
	logs := &logCount{}
	pq, err := pgqueue.New(pool, &pgqueue.Config{TablePrefix: prefix, DurableClaims: durable,
		PollInterval: 200 * time.Millisecond, Logger: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	if err := pq.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	q := &outstanding{Queue: pq}
	inbox := newInboxServer(t, 0)
	inboxes := inbox.inboxes(restartInboxes, restartHosts)
	d, err := deliver.New(q, staticKeys{}, testClient(t), &deliver.Config{
		Concurrency: restartConc, PerHost: 4, Lease: restartLease, PollInterval: 50 * time.Millisecond,
		Now: now, Logger: slog.New(logs),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- d.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-runDone; err != nil {
			t.Error(err)
		}
	}()
	if err := d.SendBatch(context.Background(), keyID, activityJSON("fanout"), inboxes, deliver.Batch{Tag: "fanout"}); err != nil {
		t.Fatal(err)
	}

	inFlight := 0 // claimed and not finished when the server died, over both kills
	for i, at := range []int64{int64(restartInboxes) * 30 / 100, int64(restartInboxes) * 65 / 100} {
		waitFor(t, 2*time.Minute, fmt.Sprintf("%d deliveries before kill %d", at, i+1), func() bool { return inbox.total.Load() >= at })
		srv.Kill()
		// Claims that got their rows before the kill count once they
		// return; nothing is claimed after it.
		time.Sleep(100 * time.Millisecond)
		inFlight += q.inFlight()
		err := d.Send(context.Background(), keyID, activityJSON(fmt.Sprintf("during-%d", i)), inboxes[:1])
		if !errors.Is(err, driver.ErrQueueUnavailable) {
			t.Fatalf("Send with the server down: %v, want driver.ErrQueueUnavailable", err)
		}
		if _, err := q.Status(context.Background(), "fanout"); !errors.Is(err, driver.ErrQueueUnavailable) {
			t.Fatalf("Status with the server down: %v, want driver.ErrQueueUnavailable", err)
		}
		if _, err := q.Depth(context.Background()); !errors.Is(err, driver.ErrQueueUnavailable) {
			t.Fatalf("Depth with the server down: %v, want driver.ErrQueueUnavailable", err)
		}
		time.Sleep(time.Second) // an outage long enough for several claims to fail
		// The jump comes before the restart: a lease taken after it is on
		// the jumped clock, so only the dead claims' leases have lapsed.
		skew.Add(int64(restartLease))
		pgtest.Restart(t, srv)
		waitFor(t, 30*time.Second, "Status and Depth after the restart", func() bool {
			_, serr := q.Status(context.Background(), "fanout")
			_, derr := q.Depth(context.Background())
			return serr == nil && derr == nil
		})
	}
	waitFor(t, 3*time.Minute, "the fan-out to finish", func() bool {
		s, err := q.Status(context.Background(), "fanout")
		return err == nil && s.Done()
	})
	s, err := q.Status(context.Background(), "fanout")
	if err != nil {
		t.Fatal(err)
	}
	if s.Delivered != restartInboxes {
		t.Fatalf("status %+v, want %d delivered, each counted once", s, restartInboxes)
	}
	inbox.mu.Lock()
	reached, received := len(inbox.got), 0
	for _, got := range inbox.got {
		received += len(got)
	}
	inbox.mu.Unlock()
	if reached != restartInboxes {
		t.Fatalf("%d of %d inboxes reached: deliveries lost", reached, restartInboxes)
	}
	dups := received - restartInboxes
	t.Logf("DurableClaims=%v: %d deliveries, %d duplicates, %d in flight at the two kills, in %v",
		durable, received, dups, inFlight, time.Since(start).Round(time.Millisecond))
	if durable && dups > inFlight {
		t.Errorf("%d duplicates, want at most the %d deliveries in flight at the kills", dups, inFlight)
	}
	// One error line per outage, however many claims failed; none when no
	// claim was tried while the server was away (Run sat waiting on slots).
	if n := logs.count("ERROR deliver: claim failed"); n > 2 {
		t.Errorf("%d claim-failure error lines for 2 outages, want at most one each", n)
	}
	if n := logs.count("WARN pgqueue: listening"); n > 2 {
		t.Errorf("%d LISTEN-failure warnings for 2 outages, want at most one each", n)
	}
}

// restartPool is a pool that finds out soon that its connections died.
func restartPool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 12
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func waitFor(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	for stop := time.Now().Add(limit); !ok(); {
		if time.Now().After(stop) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// After the server is killed and restarted, Notify listens again: an
// enqueue by another process wakes it, with no poll to stand in (its
// PollInterval is an hour).
func TestNotifyRelistensAfterRestart(t *testing.T) {
	srv := pgtest.Server(t)
	q, err := pgqueue.New(restartPool(t, srv.URL), &pgqueue.Config{TablePrefix: "relisten_", PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	wakes := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- q.Notify(ctx, time.Now, func() {
			select {
			case wakes <- struct{}{}:
			default:
			}
		})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	<-wakes // listening
	srv.Kill()
	pgtest.Restart(t, srv)

	// Another process, with a pool of its own.
	other, err := pgqueue.New(restartPool(t, srv.URL), &pgqueue.Config{TablePrefix: "relisten_"})
	if err != nil {
		t.Fatal(err)
	}
	// A connection that has run the next-due query after LISTEN, idle in
	// WaitForNotification: Notify listens again, and no retry of its will
	// wake it any more.
	watch := restartPool(t, srv.URL)
	waitFor(t, 30*time.Second, "Notify to LISTEN again", func() bool {
		var n int
		err := watch.QueryRow(context.Background(),
			`SELECT count(*) FROM pg_stat_activity WHERE state = 'idle' AND query LIKE 'SELECT least(%'`).Scan(&n)
		return err == nil && n == 1
	})
	select {
	case <-wakes:
	default:
	}
	err = other.Enqueue(context.Background(), &driver.Envelope{KeyID: keyID, Body: activityJSON("after"),
		Inboxes: []string{"https://b.example/inbox"}, EnqueuedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-wakes:
	case <-time.After(10 * time.Second):
		t.Fatal("an enqueue after the restart did not wake Notify: it is not listening")
	}
}
