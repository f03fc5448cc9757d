package pgqueue_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/pgqueue"
	"github.com/fedkit/fedkit/internal/fanoutbench"
)

// BenchmarkPGQueueFanout is deliver's BenchmarkFanout on pgqueue: one
// activity to 10,000 inboxes on 100 loopback hosts answering 202 at once,
// signed with RSA-2048, with the same metrics (see
// fanoutbench.BenchmarkFanout). memqueue_ratio is the delivery rate over the
// same send's through a MemoryQueue in the same iteration.
func BenchmarkPGQueueFanout(b *testing.B) {
	fanoutbench.BenchmarkFanout(b, func(b *testing.B) driver.Queue { return newQueue(b, nil) },
		&fanoutbench.FanoutOpts{
			Compare:       func(*testing.B) driver.Queue { return &deliver.MemoryQueue{} },
			CompareMetric: "memqueue_ratio",
		})
}

// BenchmarkPGQueueThroughput claims and completes no-op jobs (no signing,
// no sending) as Deliverer.Run would with 16 and with 100 in flight, and
// reports jobs per second; memory_ratio is that rate over a MemoryQueue's
// in the same run, the cost of durability.
func BenchmarkPGQueueThroughput(b *testing.B) {
	for _, conc := range []int{16, 100} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) { benchThroughput(b, conc) })
	}
}

func benchThroughput(b *testing.B, conc int) {
	const jobs = 20_000
	q := newQueue(b, nil)
	ctx := context.Background()
	inboxes := make([]string, jobs)
	for i := range inboxes {
		inboxes[i] = fmt.Sprintf("https://h%d.example/users/u%d/inbox", i%100, i)
	}
	var pgTime, memTime time.Duration
	var done int64
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		e := &driver.Envelope{KeyID: keyID, Body: activityJSON("noop"), Inboxes: inboxes,
			EnqueuedAt: time.Now().Add(-time.Second), Tag: fmt.Sprintf("noop-%d", i)}
		if err := q.Enqueue(ctx, e); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		if n, err := fanoutbench.WorkLikeRun(ctx, q, conc); err != nil || n != jobs {
			b.Fatalf("worked %d jobs, want %d: %v", n, jobs, err)
		}
		pgTime += time.Since(start)
		done += jobs
		b.StopTimer()
		mq := &deliver.MemoryQueue{}
		if err := mq.Enqueue(ctx, e); err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		if _, err := fanoutbench.WorkLikeRun(ctx, mq, conc); err != nil {
			b.Fatal(err)
		}
		memTime += time.Since(start)
		b.StartTimer()
	}
	b.StopTimer()
	perSec := float64(done) / pgTime.Seconds()
	b.ReportMetric(perSec, "jobs_per_s")
	b.ReportMetric(perSec/(float64(done)/memTime.Seconds()), "memory_ratio")
}

// BenchmarkPGQueueEnqueue100k enqueues one send to 100,000 inboxes and
// reports the time and the peak live heap while doing it; heap_over_input
// is that peak over the inbox list's own size.
func BenchmarkPGQueueEnqueue100k(b *testing.B) {
	const n = 100_000
	q := newQueue(b, &pgqueue.Config{})
	inboxes := make([]string, n)
	var input int
	for i := range inboxes {
		inboxes[i] = fmt.Sprintf("https://h%d.example/users/user%d/inbox", i%1000, i)
		input += len(inboxes[i]) + 16
	}
	body := activityJSON("big")
	runtime.GC()
	stopPeak := fanoutbench.PeakHeap(2 * time.Millisecond)
	var total time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		e := &driver.Envelope{KeyID: keyID, Body: body, Inboxes: inboxes, EnqueuedAt: time.Now(), Tag: fmt.Sprintf("big-%d", i)}
		if err := q.Enqueue(context.Background(), e); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	b.StopTimer()
	peak := stopPeak()
	b.ReportMetric(total.Seconds()/float64(b.N), "enqueue_s")
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "inboxes_per_s")
	b.ReportMetric(float64(peak)/(1<<20), "peak_heap_MiB")
	b.ReportMetric(float64(peak)/float64(input), "heap_over_input")
}

// BenchmarkFanoutField is deliver's BenchmarkFanoutField on pgqueue: one
// activity over a simulated fediverse in each of
// fanoutbench.FieldScenarios, with the same metrics.
func BenchmarkFanoutField(b *testing.B) {
	for _, sc := range fanoutbench.FieldScenarios() {
		b.Run(sc.Name, func(b *testing.B) {
			fanoutbench.BenchmarkFanoutField(b, func(b *testing.B) driver.Queue { return newQueue(b, nil) }, sc, nil)
		})
	}
}
