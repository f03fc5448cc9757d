package deliver_test

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
	"net/netip"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
)

// loopbackResolver sends every host name to 127.0.0.1, so one listener can
// stand for many hosts, each with its own connections and per-host limit.
type loopbackResolver struct{}

func (loopbackResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// rawSigns measures rsa.SignPKCS1v15 on GOMAXPROCS goroutines, the ceiling
// a signing deliverer can reach on these cores: signs per second of wall
// time and per second of this process's CPU time.
func rawSigns(key *rsa.PrivateKey, d time.Duration) (perSec, perCPUSec float64) {
	digest := sha256.Sum256([]byte("baseline"))
	var n atomic.Int64
	stop := time.Now().Add(d)
	start, cpu := time.Now(), processCPU()
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
	return float64(n.Load()) / time.Since(start).Seconds(), float64(n.Load()) / (processCPU() - cpu).Seconds()
}

// BenchmarkFanout sends one activity to 10,000 inboxes on 100 loopback hosts
// that answer 202 at once, signed with RSA-2048, through a MemoryQueue.
//
// sign_bound_ratio is deliveries/s over raw rsa.SignPKCS1v15 signs/s on as
// many goroutines as cores. On a shared machine the load changes from one
// second to the next, so each iteration measures the raw sign rate right
// before and right after its fan-out and takes the ratio against their mean;
// the metrics are medians over iterations (run with -benchtime Nx and
// -count, and take the median of the runs). sign_bound_ratio_cpu is the same
// ratio per second of this process's CPU time, the inbox server's included,
// which other processes' load disturbs less; cpu_share_ratio is how much of
// the cores the process got while fanning out relative to while signing
// (in each iteration sign_bound_ratio = sign_bound_ratio_cpu ×
// cpu_share_ratio), which on an overloaded machine falls below 1 for work
// that waits on I/O.
func BenchmarkFanout(b *testing.B) {
	const inboxCount, hostCount = 10_000, 100
	const signPhase = 2 * time.Second
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
	c, err := client.New(&client.Config{
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Resolver:     loopbackResolver{},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseIdleConnections()
	inboxes := make([]string, inboxCount)
	for i := range inboxes {
		inboxes[i] = fmt.Sprintf("http://h%d.example:%d/users/u%d/inbox", i%hostCount, port, i)
	}
	keys := deliver.NewCachingSenderKeys(&keys{key: key}, nil)

	var peak atomic.Uint64
	stopSampling := sampleHeap(&peak)

	var rates, signRates, ratios, cpuRatios, shares []float64
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		signsBefore, cpuSignsBefore := rawSigns(key, signPhase)
		b.StartTimer()
		elapsed, cpuUsed := fanout(b, keys, c, inboxes, fmt.Sprintf("fanout-%d", i))
		b.StopTimer()
		signsAfter, cpuSignsAfter := rawSigns(key, signPhase)
		b.StartTimer()
		rate := float64(inboxCount) / elapsed.Seconds()
		signs := (signsBefore + signsAfter) / 2
		rates = append(rates, rate)
		signRates = append(signRates, signs)
		ratios = append(ratios, rate/signs)
		if cpuUsed > 0 {
			cpuSigns := (cpuSignsBefore + cpuSignsAfter) / 2
			cpuRatios = append(cpuRatios, float64(inboxCount)/cpuUsed.Seconds()/cpuSigns)
			// The share of the cores this process got during the fan-out
			// over its share while signing: sign_bound_ratio is exactly
			// sign_bound_ratio_cpu times this.
			shares = append(shares, (cpuUsed.Seconds()/elapsed.Seconds())/(signs/cpuSigns))
		}
	}
	b.StopTimer()
	stopSampling()
	b.ReportMetric(median(rates), "deliveries_per_s")
	b.ReportMetric(median(signRates), "raw_signs_per_s")
	b.ReportMetric(median(ratios), "sign_bound_ratio")
	if len(cpuRatios) > 0 {
		b.ReportMetric(median(cpuRatios), "sign_bound_ratio_cpu")
		b.ReportMetric(median(shares), "cpu_share_ratio")
	}
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak_heap_MiB")
}

// fanout sends one activity to inboxes through a fresh Deliverer and waits
// until every delivery is settled, returning the wall and CPU time taken.
func fanout(b *testing.B, keys deliver.SenderKeys, c *client.Client, inboxes []string, tag string) (elapsed, cpuUsed time.Duration) {
	d, err := deliver.New(&deliver.MemoryQueue{}, keys, c, nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}()
	start, cpu := time.Now(), processCPU()
	if err := d.SendBatch(context.Background(), testKeyID, activity("bench"), inboxes, deliver.Batch{Tag: tag}); err != nil {
		b.Fatal(err)
	}
	for {
		st, _ := d.Status(context.Background(), tag)
		if st.Pending == 0 {
			if st.Delivered != len(inboxes) {
				b.Fatalf("status %+v", st)
			}
			return time.Since(start), processCPU() - cpu
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// sampleHeap keeps the peak of live heap objects in peak until the returned
// function is called.
func sampleHeap(peak *atomic.Uint64) (stop func()) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	quit := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-tick.C:
			case <-quit:
				return
			}
		}
	}()
	return func() { close(quit); <-sampled }
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
