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
func BenchmarkFanout(b *testing.B) {
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

	// Sign rate before and after the fan-out, averaged, so load from other
	// processes on shared cores weighs on both sides of the ratio alike.
	signsBefore, cpuSignsBefore := rawSigns(key, time.Second)

	var peak atomic.Uint64
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	stopSampling := make(chan struct{})
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
			case <-stopSampling:
				return
			}
		}
	}()

	var delivered int
	var elapsed, cpuUsed time.Duration
	b.ResetTimer()
	for i := range b.N {
		q := &deliver.MemoryQueue{}
		d, err := deliver.New(q, keys, c, nil)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- d.Run(ctx) }()
		tag := fmt.Sprintf("fanout-%d", i)
		start, cpu := time.Now(), processCPU()
		if err := d.SendBatch(context.Background(), testKeyID, activity("bench"), inboxes, deliver.Batch{Tag: tag}); err != nil {
			b.Fatal(err)
		}
		for {
			st, _ := d.Status(context.Background(), tag)
			if st.Pending == 0 {
				if st.Delivered != inboxCount {
					b.Fatalf("status %+v", st)
				}
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		elapsed += time.Since(start)
		cpuUsed += processCPU() - cpu
		delivered += inboxCount
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	signsAfter, cpuSignsAfter := rawSigns(key, time.Second)
	signsPerSec := (signsBefore + signsAfter) / 2
	cpuSignsPerSec := (cpuSignsBefore + cpuSignsAfter) / 2
	close(stopSampling)
	<-sampled
	perSec := float64(delivered) / elapsed.Seconds()
	b.ReportMetric(perSec, "deliveries_per_s")
	b.ReportMetric(signsPerSec, "raw_signs_per_s")
	b.ReportMetric(perSec/signsPerSec, "sign_bound_ratio")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak_heap_MiB")
	// The same ratio per CPU-second this process used (the inbox server's
	// work included), which holds steadier when other processes share the
	// cores and take them unevenly.
	if cpuUsed > 0 {
		b.ReportMetric(float64(delivered)/cpuUsed.Seconds()/cpuSignsPerSec, "sign_bound_ratio_cpu")
	}
}
