package pgqueue_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/pgqueue"
)

type rsaKeys struct{ key *rsa.PrivateKey }

func (k rsaKeys) Key(context.Context, string) (crypto.Signer, error) { return k.key, nil }
func (rsaKeys) Gone(context.Context, string) (bool, error)           { return false, nil }

// rawSignsPerSecond measures rsa.SignPKCS1v15 on GOMAXPROCS goroutines: the
// ceiling a signing deliverer can reach on these cores (as deliver's
// BenchmarkFanout measures it).
func rawSignsPerSecond(key *rsa.PrivateKey, d time.Duration) float64 {
	digest := sha256.Sum256([]byte("baseline"))
	var n atomic.Int64
	stop := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for time.Now().Before(stop) {
				if _, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, digest[:]); err != nil {
					panic(err)
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds()
}

// peakHeap samples the live heap until stop is called, and returns the
// highest value seen.
func peakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(sampled)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-tick.C:
			case <-done:
				return
			}
		}
	}()
	return func() uint64 { close(done); <-sampled; return peak.Load() }
}

// BenchmarkPGQueueFanout is deliver's BenchmarkFanout on pgqueue: one
// activity to 10,000 inboxes on 100 loopback hosts answering 202 at once,
// signed with RSA-2048. sign_bound_ratio is deliveries per second over the
// raw RSA signing rate of the same cores in the same run; memqueue_ratio is
// the rate over the same send's through a MemoryQueue in the same run.
func BenchmarkPGQueueFanout(b *testing.B) {
	const inboxCount, hostCount = 10_000, 100
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	c := testClient(b)
	inboxes := make([]string, inboxCount)
	for i := range inboxes {
		inboxes[i] = fmt.Sprintf("http://h%d.example:%d/users/u%d/inbox", i%hostCount, port, i)
	}
	keys := deliver.NewCachingSenderKeys(rsaKeys{key}, nil)
	q := newQueue(b, nil)

	signsBefore := rawSignsPerSecond(key, time.Second)
	stopPeak := peakHeap()
	var pgTime, memTime time.Duration
	delivered := 0
	b.ResetTimer()
	for i := range b.N {
		pgTime += fanOnce(b, q, keys, c, inboxes, fmt.Sprintf("fanout-%d", i))
		delivered += inboxCount
		b.StopTimer()
		// The same send through a MemoryQueue, for the queue's own cost.
		memTime += fanOnce(b, &deliver.MemoryQueue{}, keys, c, inboxes, "mem")
		b.StartTimer()
	}
	b.StopTimer()
	peak := stopPeak()
	signsPerSec := (signsBefore + rawSignsPerSecond(key, time.Second)) / 2
	perSec := float64(delivered) / pgTime.Seconds()
	b.ReportMetric(perSec/(float64(delivered)/memTime.Seconds()), "memqueue_ratio")
	b.ReportMetric(perSec, "deliveries_per_s")
	b.ReportMetric(signsPerSec, "raw_signs_per_s")
	b.ReportMetric(perSec/signsPerSec, "sign_bound_ratio")
	b.ReportMetric(float64(peak)/(1<<20), "peak_heap_MiB")
}

// fanOnce sends activity to inboxes through a Deliverer on q and returns
// how long until every inbox had it. Completion is counted in OnSettled, not
// by polling Status, so the measurement adds no load to the database.
func fanOnce(b *testing.B, q deliver.Queue, keys deliver.SenderKeys, c *client.Client, inboxes []string, tag string) time.Duration {
	var settled atomic.Int64
	all := make(chan struct{})
	d, err := deliver.New(q, keys, c, &deliver.Config{
		OnSettled: func(_ context.Context, s deliver.Settlement) {
			if s.Result != deliver.ResultDelivered {
				b.Errorf("settled %v", s)
			}
			if settled.Add(1) == int64(len(inboxes)) {
				close(all)
			}
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	start := time.Now()
	if err := d.SendBatch(context.Background(), keyID, activityJSON("bench"), inboxes, deliver.Batch{Tag: tag}); err != nil {
		b.Fatal(err)
	}
	select {
	case <-all:
	case <-time.After(5 * time.Minute):
		b.Fatal("fan-out stalled")
	}
	elapsed := time.Since(start)
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	if st, err := d.Status(context.Background(), tag); err != nil || st.Delivered != len(inboxes) || st.Pending != 0 {
		b.Fatalf("status %+v, %v", st, err)
	}
	return elapsed
}

// workLikeRun works q as Deliverer.Run does, with sends that cost nothing:
// at most conc jobs in flight, claiming as many as there are free slots,
// each job finished by its own goroutine. It returns once the queue is
// empty, with how many jobs it worked.
func workLikeRun(q deliver.Queue, conc int) int64 {
	ctx := context.Background()
	slots := make(chan struct{}, conc)
	var wg sync.WaitGroup
	var n atomic.Int64
	for {
		slots <- struct{}{}
		free := 1
	fill:
		for free < conc {
			select {
			case slots <- struct{}{}:
				free++
			default:
				break fill
			}
		}
		jobs, err := q.Claim(ctx, deliver.ClaimOpts{Now: time.Now(), Lease: time.Minute, Limit: free})
		if err != nil {
			panic(err)
		}
		for range free - len(jobs) {
			<-slots
		}
		if len(jobs) == 0 {
			// One claimer and every job due: nothing left but what is in flight.
			wg.Wait()
			return n.Load()
		}
		for _, j := range jobs {
			wg.Go(func() {
				defer func() { <-slots }()
				if err := q.Finish(ctx, j.Ref(), deliver.Outcome{Result: deliver.ResultDelivered, Attempts: 1}); err != nil {
					panic(err)
				}
				n.Add(1)
			})
		}
	}
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
		e := &deliver.Envelope{KeyID: keyID, Body: activityJSON("noop"), Inboxes: inboxes,
			EnqueuedAt: time.Now().Add(-time.Second), Tag: fmt.Sprintf("noop-%d", i)}
		if err := q.Enqueue(ctx, e); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		if n := workLikeRun(q, conc); n != jobs {
			b.Fatalf("worked %d jobs, want %d", n, jobs)
		}
		pgTime += time.Since(start)
		done += jobs
		b.StopTimer()
		mq := &deliver.MemoryQueue{}
		if err := mq.Enqueue(ctx, e); err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		workLikeRun(mq, conc)
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
	stopPeak := peakHeap()
	var total time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		e := &deliver.Envelope{KeyID: keyID, Body: body, Inboxes: inboxes, EnqueuedAt: time.Now(), Tag: fmt.Sprintf("big-%d", i)}
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
