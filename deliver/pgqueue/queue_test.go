package pgqueue_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/pgqueue"
	"github.com/fedkit/fedkit/internal/pgtest"
)

var t0 = time.Now().UTC().Truncate(time.Second)

func env(tag string, inboxes ...string) *driver.Envelope {
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

func inboxes(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("https://h%d.example/users/u%d/inbox", i%100, i)
	}
	return s
}

func count(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func claim(t testing.TB, q driver.Queue, now time.Time, limit int) []*driver.Job {
	t.Helper()
	jobs, err := q.Claim(context.Background(), driver.ClaimOpts{Now: now, Lease: time.Minute, Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

func TestNewValidates(t *testing.T) {
	pool := pgtest.Pool(t)
	for _, tc := range []struct {
		name string
		cfg  *pgqueue.Config
		ok   bool
	}{
		{"nil config", nil, true},
		{"prefix", &pgqueue.Config{TablePrefix: "tenant_7_"}, true},
		{"schema", &pgqueue.Config{Schema: "deliveries"}, true},
		{"upper-case prefix", &pgqueue.Config{TablePrefix: "Fedkit_"}, false},
		{"quote in prefix", &pgqueue.Config{TablePrefix: `x"; DROP TABLE y; --`}, false},
		{"dot in schema", &pgqueue.Config{Schema: "a.b"}, false},
		{"prefix too long", &pgqueue.Config{TablePrefix: strings.Repeat("p", 50)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pgqueue.New(pool, tc.cfg)
			if tc.ok != (err == nil) {
				t.Fatalf("New: %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, pgqueue.ErrInvalidConfig) {
				t.Fatalf("New: %v, want ErrInvalidConfig", err)
			}
		})
	}
	if _, err := pgqueue.New(nil, nil); !errors.Is(err, pgqueue.ErrInvalidConfig) {
		t.Fatalf("New(nil pool): %v", err)
	}
}

// New does not connect: a pool to nowhere builds a queue, and using it fails
// with the driver's error, wrapped.
func TestNewNeverDials(t *testing.T) {
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=1")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	q, err := pgqueue.New(pool, nil)
	if err != nil {
		t.Fatalf("New with an unreachable pool: %v", err)
	}
	if _, err := q.Status(context.Background(), "x"); err == nil || !strings.HasPrefix(err.Error(), "pgqueue: status:") {
		t.Fatalf("Status on an unreachable pool: %v", err)
	}
}

func TestNotMigrated(t *testing.T) {
	q, err := pgqueue.New(pgtest.Pool(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = q.Claim(context.Background(), driver.ClaimOpts{Now: t0, Lease: time.Minute, Limit: 1})
	if !errors.Is(err, pgqueue.ErrNotMigrated) {
		t.Fatalf("Claim before Migrate: %v, want ErrNotMigrated", err)
	}
}

func TestMigrateIdempotentAndConcurrent(t *testing.T) {
	pool := pgtest.Pool(t)
	q, err := pgqueue.New(pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if err := q.Migrate(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := q.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, "SELECT count(*) FROM fedkit_delivery_migrations"); n != pgqueue.SchemaVersion {
		t.Fatalf("%d migrations recorded, want %d", n, pgqueue.SchemaVersion)
	}
	// Schema gives the same SQL for other tools; applying it again is harmless.
	sql, err := q.Schema()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(context.Background(), sql); err != nil {
		t.Fatalf("applying Schema to a migrated database: %v", err)
	}
}

// A table made by the first version, without ordering_key, is upgraded and
// keeps its jobs, which then claim, settle and count as before.
func TestUpgradeKeepsJobs(t *testing.T) {
	pool := pgtest.Pool(t)
	ctx := context.Background()
	q, err := pgqueue.New(pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.MigrateTo(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var hasCol bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'fedkit_delivery_jobs' AND column_name = 'ordering_key')`).Scan(&hasCol); err != nil || hasCol {
		t.Fatalf("version 1 has ordering_key: %v %v", hasCol, err)
	}
	// Rows as version 1 wrote them.
	var act int64
	if err := pool.QueryRow(ctx, `INSERT INTO fedkit_delivery_activities (key_id, activity_id, actor_id, tag, body, enqueued_at)
		VALUES ('k', 'https://a.example/activities/old', 'https://a.example/users/alice', 'old', '{"id":"old"}', $1) RETURNING id`, t0).Scan(&act); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO fedkit_delivery_jobs (activity, inbox, due_at, attempts)
		VALUES ($1, 'https://b.example/inbox', $2, 2), ($1, 'https://c.example/inbox', $2, 0)`, act, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Claim(ctx, driver.ClaimOpts{Now: t0, Lease: time.Minute, Limit: 1}); !errors.Is(err, pgqueue.ErrNotMigrated) {
		t.Fatalf("version-2 Claim on a version-1 table: %v, want ErrNotMigrated", err)
	}

	if err := q.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, "SELECT count(*) FROM fedkit_delivery_jobs"); n != 2 {
		t.Fatalf("%d jobs after the upgrade, want 2", n)
	}
	// New keyed sends queue behind nothing old (old jobs have no key) but
	// behind each other.
	a := env("new1", "https://b.example/inbox")
	a.OrderingKey = "k"
	b := env("new2", "https://b.example/inbox")
	b.OrderingKey = "k"
	for _, e := range []*driver.Envelope{a, b} {
		if err := q.Enqueue(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	jobs := claim(t, q, t0, 10)
	got := map[string]int{}
	for _, j := range jobs {
		got[j.Envelope.Tag+" "+j.Inbox] = j.Attempts
	}
	_, new1 := got["new1 https://b.example/inbox"]
	if len(jobs) != 3 || got["old https://b.example/inbox"] != 2 || !new1 {
		t.Fatalf("claimed %v, want both old jobs (attempts kept) and new1", got)
	}
	if _, ok := got["new2 https://b.example/inbox"]; ok {
		t.Fatalf("new2 claimed while new1 is queued")
	}
	for _, j := range jobs {
		if err := q.Finish(ctx, j.Ref(), driver.Outcome{Result: driver.ResultDelivered, Attempts: j.Attempts + 1}); err != nil {
			t.Fatal(err)
		}
	}
	if s, _ := q.Status(ctx, "old"); s.Delivered != 2 || s.Pending != 0 {
		t.Fatalf("old batch status %+v", s)
	}
}

// Deployments sharing a database by prefix or by schema never see each
// other's jobs.
func TestPrefixAndSchemaIsolate(t *testing.T) {
	pool := pgtest.Pool(t)
	ctx := context.Background()
	// A second fresh schema, named explicitly through Schema; pgtest names
	// it uniquely and drops it, so concurrent runs of this test never meet.
	var other string
	if err := pgtest.Pool(t).QueryRow(ctx, "SELECT current_schema()").Scan(&other); err != nil {
		t.Fatal(err)
	}
	var qs []*pgqueue.Queue
	for _, cfg := range []*pgqueue.Config{nil, {TablePrefix: "tenant_b_"}, {Schema: other}} {
		qs = append(qs, migrated(t, pool, cfg))
	}
	for i, q := range qs {
		if err := q.Enqueue(ctx, env(fmt.Sprintf("iso%d", i), inboxes(i+1)...)); err != nil {
			t.Fatal(err)
		}
	}
	for i, q := range qs {
		jobs := claim(t, q, t0, 100)
		if len(jobs) != i+1 {
			t.Fatalf("queue %d claimed %d jobs, want %d", i, len(jobs), i+1)
		}
		for _, j := range jobs {
			if j.Envelope.Tag != fmt.Sprintf("iso%d", i) {
				t.Fatalf("queue %d claimed %s's job", i, j.Envelope.Tag)
			}
		}
	}
}

// countingTracer counts statements and COPYs sent.
type countingTracer struct{ queries, copies atomic.Int64 }

func (c *countingTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.queries.Add(1)
	return ctx
}
func (c *countingTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *countingTracer) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	c.copies.Add(1)
	return ctx
}
func (c *countingTracer) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}

// A 10 KB activity to 5,000 inboxes stores its body once and goes in a
// handful of statements, not one per inbox.
func TestFanOutStoresBodyOnceInFewStatements(t *testing.T) {
	tr := &countingTracer{}
	pool := openPool(t, pgtest.ConnString(t), func(c *pgxpool.Config) { c.ConnConfig.Tracer = tr })
	q := migrated(t, pool, nil)
	for _, n := range []int{100, 5000} { // under and over CopyThreshold
		e := env(fmt.Sprintf("big%d", n), inboxes(n)...)
		e.Body = []byte(`{"id":"x","content":"` + strings.Repeat("a", 10_000) + `"}`)
		q0, c0 := tr.queries.Load(), tr.copies.Load()
		if err := q.Enqueue(context.Background(), e); err != nil {
			t.Fatal(err)
		}
		if sent := tr.queries.Load() - q0 + tr.copies.Load() - c0; sent > 6 {
			t.Errorf("%d inboxes: %d statements, want a handful", n, sent)
		}
		if n > pgqueue.CopyThresholdDefault && tr.copies.Load() == c0 {
			t.Errorf("%d inboxes: no COPY", n)
		}
	}
	if n := count(t, pool, "SELECT count(*) FROM fedkit_delivery_activities"); n != 2 {
		t.Fatalf("%d activity rows, want one per send", n)
	}
	if n := count(t, pool, "SELECT count(*) FROM fedkit_delivery_jobs"); n != 5100 {
		t.Fatalf("%d jobs, want 5100", n)
	}
	if n := count(t, pool, "SELECT sum(octet_length(body)) FROM fedkit_delivery_activities"); n > 2*10_100 {
		t.Fatalf("bodies take %d bytes, want each stored once", n)
	}
	// Job rows hold no body: far below one body per inbox.
	if n := count(t, pool, "SELECT pg_table_size('fedkit_delivery_jobs')"); n > 5100*10_000/20 {
		t.Fatalf("jobs table is %d bytes", n)
	}
	// Claimed jobs of one send share one Envelope.
	jobs := claim(t, q, t0, 50)
	for _, j := range jobs[1:] {
		if j.Envelope.Tag == jobs[0].Envelope.Tag && j.Envelope != jobs[0].Envelope {
			t.Fatalf("jobs of one send got different envelopes")
		}
	}
}

// The queue gives up on what the worker would: a retry is never due after
// the deadline, and a pending outcome that used the send's attempts is
// settled as given up.
func TestDeadlineAndMaxAttemptsEnforced(t *testing.T) {
	q := newQueue(t, nil)
	ctx := context.Background()
	e := env("limits", "https://b.example/inbox", "https://c.example/inbox")
	e.Deadline = t0.Add(10 * time.Minute)
	e.MaxAttempts = 2
	if err := q.Enqueue(ctx, e); err != nil {
		t.Fatal(err)
	}
	jobs := claim(t, q, t0, 10)
	if len(jobs) != 2 {
		t.Fatalf("claimed %d", len(jobs))
	}
	// Retry asked an hour out: due at the deadline instead.
	if err := q.Finish(ctx, jobs[0].Ref(), driver.Outcome{RetryAt: t0.Add(time.Hour), Attempts: 1}); err != nil {
		t.Fatal(err)
	}
	// Second attempt of two reported as pending: given up.
	if err := q.Finish(ctx, jobs[1].Ref(), driver.Outcome{RetryAt: t0.Add(time.Minute), Attempts: 2}); err != nil {
		t.Fatal(err)
	}
	if got := claim(t, q, e.Deadline.Add(-time.Second), 10); len(got) != 0 {
		t.Fatalf("claimed %d before the deadline", len(got))
	}
	got := claim(t, q, e.Deadline, 10)
	if len(got) != 1 || got[0].ID != jobs[0].ID {
		t.Fatalf("at the deadline claimed %d jobs, want the retried one", len(got))
	}
	if s, _ := q.Status(ctx, "limits"); s.GaveUp != 1 || s.Pending != 1 {
		t.Fatalf("status %+v, want 1 given up, 1 pending", s)
	}
}

// Concurrent Finish calls are grouped into few statements; each still gets
// its own answer, and a claim finished twice at once succeeds once.
func TestConcurrentFinish(t *testing.T) {
	q := newQueue(t, &pgqueue.Config{FinishBatch: 7})
	ctx := context.Background()
	if err := q.Enqueue(ctx, env("many", inboxes(300)...)); err != nil {
		t.Fatal(err)
	}
	jobs := claim(t, q, t0, 300)
	if len(jobs) != 300 {
		t.Fatalf("claimed %d", len(jobs))
	}
	var ok, lost atomic.Int64
	var wg sync.WaitGroup
	for i, j := range jobs {
		for range 1 + i%2 { // odd jobs finished twice with one token
			wg.Go(func() {
				err := q.Finish(ctx, j.Ref(), driver.Outcome{Result: driver.ResultDelivered, Attempts: 1})
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, driver.ErrLeaseLost):
					lost.Add(1)
				default:
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	if ok.Load() != 300 || lost.Load() != 150 {
		t.Fatalf("%d finished, %d lost; want 300 and 150", ok.Load(), lost.Load())
	}
	if s, _ := q.Status(ctx, "many"); s.Delivered != 300 || s.Pending != 0 {
		t.Fatalf("status %+v", s)
	}
}

func TestSweepRemovesFinishedSends(t *testing.T) {
	pool := pgtest.Pool(t)
	q := migrated(t, pool, nil)
	ctx := context.Background()
	for _, tag := range []string{"done", "open"} {
		if err := q.Enqueue(ctx, env(tag, "https://b.example/inbox")); err != nil {
			t.Fatal(err)
		}
	}
	for _, j := range claim(t, q, t0, 10) {
		if j.Envelope.Tag == "done" {
			if err := q.Finish(ctx, j.Ref(), driver.Outcome{Result: driver.ResultDelivered, Attempts: 1}); err != nil {
				t.Fatal(err)
			}
		}
	}
	n, err := q.Sweep(ctx)
	if err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1", n, err)
	}
	if n := count(t, pool, "SELECT count(*) FROM fedkit_delivery_activities WHERE tag = 'open'"); n != 1 {
		t.Fatalf("the open send was swept")
	}
	if s, _ := q.Status(ctx, "done"); s.Delivered != 1 {
		t.Fatalf("counts lost with the send: %+v", s)
	}
}

// Notify wakes on another process's Enqueue and when a retry comes due,
// long before its hour-long poll.
func TestNotify(t *testing.T) {
	cs := pgtest.ConnString(t)
	open := func() *pgqueue.Queue { return openQueue(t, cs, &pgqueue.Config{PollInterval: time.Hour}) }
	listener, other := open(), open()
	woke := startNotify(t, listener)
	waitWake := func(what string) {
		t.Helper()
		select {
		case <-woke:
		case <-time.After(20 * time.Second):
			t.Fatalf("no wake-up after %s", what)
		}
	}
	// The first wake-up comes once LISTEN is in place; from then on
	// another pool's Enqueue must be heard.
	waitWake("listening")
	e := env("wake", "https://b.example/inbox")
	e.EnqueuedAt = time.Now()
	if err := other.Enqueue(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	waitWake("another pool's Enqueue")
	// A retry due shortly: the listener learns of it at its next wake-up
	// (the Enqueue below) and wakes again when it comes due. Two seconds
	// leave room for a slow machine to reach that wake-up before the retry
	// is due, which would leave nothing to wait for.
	jobs, err := other.Claim(context.Background(), driver.ClaimOpts{Now: time.Now(), Lease: time.Minute, Limit: 100})
	if err != nil || len(jobs) == 0 {
		t.Fatalf("claim: %d, %v", len(jobs), err)
	}
	for _, j := range jobs {
		if err := other.Finish(context.Background(), j.Ref(), driver.Outcome{RetryAt: time.Now().Add(2 * time.Second), Attempts: 1}); err != nil {
			t.Fatal(err)
		}
	}
	for len(woke) > 0 {
		<-woke
	}
	e = env("nudge", "https://c.example/inbox")
	e.EnqueuedAt = time.Now().Add(time.Hour)
	if err := other.Enqueue(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	waitWake("an Enqueue")
	waitWake("a retry coming due")
}

// startNotify runs q.Notify until the test ends and returns its wake-ups.
func startNotify(t *testing.T, q *pgqueue.Queue) <-chan struct{} {
	ctx, cancel := context.WithCancel(context.Background())
	woke := make(chan struct{}, 100)
	done := make(chan error)
	go func() { done <- q.Notify(ctx, time.Now, func() { woke <- struct{}{} }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return woke
}

// Context errors pass through mapError as they are, for errors.Is.
func TestContextErrorsPassThrough(t *testing.T) {
	q := newQueue(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := q.Claim(ctx, driver.ClaimOpts{Now: t0, Lease: time.Minute, Limit: 1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Claim with a cancelled context: %v", err)
	}
	if err := q.Enqueue(ctx, env("c", "https://b.example/inbox")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Enqueue with a cancelled context: %v", err)
	}
	if _, err := q.Drop(context.Background(), driver.DropFilter{}); !errors.Is(err, driver.ErrEmptyDropFilter) {
		t.Fatalf("Drop(empty): %v", err)
	}
}

// Notify survives losing its connection: it reconnects, listens again and
// hears the next Enqueue.
func TestNotifyReconnects(t *testing.T) {
	cs := pgtest.ConnString(t)
	// Names the listener's queries in pg_stat_activity, which shows every
	// session of the server: unique, so a concurrent run is not mistaken
	// for this one.
	prefix := fmt.Sprintf("reconnect_%d_%d_", os.Getpid(), time.Now().UnixNano()%1e9)
	open := func() (*pgqueue.Queue, *pgxpool.Pool) {
		pool := openPool(t, cs, nil)
		return migrated(t, pool, &pgqueue.Config{TablePrefix: prefix, PollInterval: time.Hour}), pool
	}
	listener, _ := open()
	other, pool := open()
	listenerPID := func() int32 {
		var pid int32
		err := pool.QueryRow(context.Background(), `SELECT coalesce(max(pid), 0) FROM pg_stat_activity
			WHERE query LIKE '%'||$1||'jobs WHERE lane%' AND pid <> pg_backend_pid()`, prefix).Scan(&pid)
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	waitPID := func(not int32) int32 {
		t.Helper()
		stop := time.Now().Add(20 * time.Second)
		for {
			if pid := listenerPID(); pid != 0 && pid != not {
				return pid
			}
			if time.Now().After(stop) {
				t.Fatal("no listener connection")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	woke := startNotify(t, listener)
	first := waitPID(0)
	if _, err := pool.Exec(context.Background(), "SELECT pg_terminate_backend($1)", first); err != nil {
		t.Fatal(err)
	}
	waitPID(first)
	// Listening again: its wake-ups on losing the connection and on
	// listening again were sent before the query waitPID saw, so draining
	// now leaves only what the next send causes.
	for len(woke) > 0 {
		<-woke
	}
	e := env("after", "https://b.example/inbox")
	e.EnqueuedAt = time.Now().Add(time.Hour)
	if err := other.Enqueue(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	select {
	case <-woke:
	case <-time.After(20 * time.Second):
		t.Fatal("no wake-up after reconnecting")
	}
}

// Channels are global to a database: deployments kept apart by search_path
// (or by Schema) get channels of their own, so one's sends do not wake the
// other's workers; two processes of one deployment share theirs.
func TestChannelPerDeployment(t *testing.T) {
	ctx := context.Background()
	csA := pgtest.ConnString(t)
	name := func(q *pgqueue.Queue) string {
		t.Helper()
		c, err := q.Channel(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a1, a2 := name(openQueue(t, csA, nil)), name(openQueue(t, csA, nil))
	b := name(openQueue(t, pgtest.ConnString(t), nil))
	if a1 != a2 {
		t.Fatalf("two pools on one schema: channels %q and %q, want one", a1, a2)
	}
	if a1 == b {
		t.Fatalf("two schemas by search_path share channel %q", a1)
	}
	if len(a1) > 63 || !strings.HasPrefix(a1, pgqueue.TablePrefixDefault+"wake_") {
		t.Fatalf("channel %q", a1)
	}
}

// A cache smaller than the sends in flight still hands each job its own
// send's envelope, reloading what it evicted.
func TestEnvelopeCacheEviction(t *testing.T) {
	q := newQueue(t, &pgqueue.Config{EnvelopeCache: 1})
	ctx := context.Background()
	tags := []string{"e0", "e1", "e2"}
	for _, tag := range tags {
		if err := q.Enqueue(ctx, env(tag, inboxes(4)...)); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	for {
		jobs := claim(t, q, t0, 5) // batches straddle sends
		if len(jobs) == 0 {
			break
		}
		for _, j := range jobs {
			e := j.Envelope
			if want := `{"id":"https://a.example/activities/` + e.Tag + `"}`; string(e.Body) != want || e.ActivityID != "https://a.example/activities/"+e.Tag {
				t.Fatalf("job of send %s carries body %s", e.Tag, e.Body)
			}
			seen[e.Tag]++
		}
	}
	for _, tag := range tags {
		if seen[tag] != 4 {
			t.Fatalf("claimed %v, want 4 jobs of each send", seen)
		}
	}
}
