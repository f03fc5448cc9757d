package bench_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/pgqueue"
	"github.com/fedkit/fedkit/internal/fanoutbench"
	"github.com/fedkit/fedkit/internal/pgtest"
)

type noopArgs struct {
	Inbox string `json:"inbox"`
}

func (noopArgs) Kind() string { return "fedkit_noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
}

func (noopWorker) Work(context.Context, *river.Job[noopArgs]) error { return nil }

const jobCount = 20_000

// BenchmarkPGQueueVsRiver inserts 20,000 no-op jobs and works them all, on
// fedkit's pgqueue (claimed and finished as Deliverer.Run does) and on River
// (its default queue, fetching with its shortest cool-down), with the same
// number of workers, on the same database in the same run.
// Each side is timed from before the insert to the last job completed.
// ratio is pgqueue's jobs per second over River's.
func BenchmarkPGQueueVsRiver(b *testing.B) {
	// Deliverer's default concurrency, and the 100 workers River's
	// examples use; both sides get the same number in flight.
	// durable=true makes pgqueue wait for every claim and outcome to reach
	// disk (pgqueue.Config.DurableClaims); River's completer batches its
	// completions instead.
	for _, conc := range []int{16, 100} {
		for _, durable := range []bool{false, true} {
			b.Run(fmt.Sprintf("workers=%d/durable=%v", conc, durable), func(b *testing.B) { benchVsRiver(b, conc, durable) })
		}
	}
}

func benchVsRiver(b *testing.B, conc int, durable bool) {
	ctx := context.Background()
	pool := pgtest.Pool(b)

	q, err := pgqueue.New(pool, &pgqueue.Config{DurableClaims: durable})
	if err != nil {
		b.Fatal(err)
	}
	if err := q.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	rd := riverpgxv5.New(pool)
	m, err := rivermigrate.New(rd, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		b.Fatal(err)
	}
	ws := river.NewWorkers()
	river.AddWorker(ws, noopWorker{})
	rc, err := river.NewClient(rd, &river.Config{
		Queues:        map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: conc}},
		Workers:       ws,
		FetchCooldown: river.FetchCooldownMin,
	})
	if err != nil {
		b.Fatal(err)
	}
	// A buffer for every job, so no completion event is dropped.
	completed, cancelSub := rc.SubscribeConfig(&river.SubscribeConfig{
		ChanSize: 2 * jobCount, Kinds: []river.EventKind{river.EventKindJobCompleted}})
	defer cancelSub()
	if err := rc.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = rc.Stop(context.Background()) }()

	inboxes := make([]string, jobCount)
	params := make([]river.InsertManyParams, jobCount)
	for i := range inboxes {
		inboxes[i] = fmt.Sprintf("https://h%d.example/users/u%d/inbox", i%100, i)
		params[i] = river.InsertManyParams{Args: noopArgs{Inbox: inboxes[i]}}
	}

	var ours, theirs time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		e := &driver.Envelope{KeyID: "k", Body: []byte(`{"id":"x"}`), Inboxes: inboxes,
			EnqueuedAt: time.Now().Add(-time.Second), Tag: fmt.Sprintf("noop-%d", i)}
		if err := q.Enqueue(ctx, e); err != nil {
			b.Fatal(err)
		}
		if n, err := fanoutbench.WorkLikeRun(ctx, q, conc); err != nil || n != jobCount {
			b.Fatalf("pgqueue worked %d jobs: %v", n, err)
		}
		ours += time.Since(start)

		start = time.Now()
		if _, err := rc.InsertManyFast(ctx, params); err != nil {
			b.Fatal(err)
		}
		for range jobCount {
			select {
			case <-completed:
			case <-time.After(time.Minute):
				b.Fatal("River stalled")
			}
		}
		theirs += time.Since(start)
	}
	b.StopTimer()
	oursPerSec := float64(jobCount*b.N) / ours.Seconds()
	theirsPerSec := float64(jobCount*b.N) / theirs.Seconds()
	b.ReportMetric(oursPerSec, "pgqueue_jobs_per_s")
	b.ReportMetric(theirsPerSec, "river_jobs_per_s")
	b.ReportMetric(oursPerSec/theirsPerSec, "ratio")
}
