package fanoutbench

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
	"github.com/fedkit/fedkit/deliver/driver"
)

// The shape of BenchmarkFanout's send, as the deliver issue sets it.
const (
	FanoutInboxes = 10_000
	FanoutHosts   = 100
)

// fanoutSignPhase is how long each raw signing measurement runs.
const fanoutSignPhase = 2 * time.Second

const fanoutKeyID = "https://a.example/users/alice#main-key"

// FanoutOpts adds to BenchmarkFanout; nil or the zero value adds nothing.
type FanoutOpts struct {
	// Compare, when set, returns a queue the same send also goes through
	// in every iteration, off the timer, and the median of the delivery
	// rate through newQueue's queue over the rate through this one is
	// reported as CompareMetric.
	Compare func(b *testing.B) driver.Queue
	// CompareMetric names that ratio, e.g. "memqueue_ratio"; required
	// with Compare.
	CompareMetric string
}

// BenchmarkFanout sends one activity to FanoutInboxes inboxes on FanoutHosts
// loopback hosts (one listener answering 202 at once; the client's Resolver
// sends every name to 127.0.0.1), signed with RSA-2048, through a Deliverer
// on the queue newQueue returns. newQueue is called once per iteration, off
// the timer, and must return an empty queue.
//
// It reports deliveries_per_s; raw_signs_per_s, raw rsa.SignPKCS1v15 signs
// per second on as many goroutines as cores; sign_bound_ratio, the first
// over the second; sign_bound_ratio_cpu, the same ratio per second of this
// process's CPU time, the inbox server's included, which other processes'
// load disturbs less; cpu_share_ratio, the share of the cores the process
// got while fanning out relative to while signing (in each iteration
// sign_bound_ratio = sign_bound_ratio_cpu × cpu_share_ratio; it falls below
// 1 on an overloaded machine for work that waits on I/O); and
// peak_heap_MiB, the peak of live heap objects. The two CPU metrics are
// left out where process CPU time is not measured.
//
// On a shared machine the load changes from one second to the next, so each
// iteration measures the raw sign rate for 2 s right before and right after
// its fan-out and takes the ratio against their mean; the metrics are
// medians over iterations (run with -benchtime Nx and -count, and take the
// median of the runs).
func BenchmarkFanout(b *testing.B, newQueue func(b *testing.B) driver.Queue, opts *FanoutOpts) {
	b.Helper()
	if opts == nil {
		opts = &FanoutOpts{}
	}
	if opts.Compare != nil && opts.CompareMetric == "" {
		b.Fatal("fanoutbench: FanoutOpts.Compare needs a CompareMetric")
	}
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
	inboxes := make([]string, FanoutInboxes)
	for i := range inboxes {
		inboxes[i] = fmt.Sprintf("http://h%d.example:%d/users/u%d/inbox", i%FanoutHosts, port, i)
	}
	keys := deliver.NewCachingSenderKeys(rsaKeys{key}, nil)

	stopPeak := PeakHeap(5 * time.Millisecond)
	defer stopPeak()

	var rates, signRates, ratios, cpuRatios, shares, compared []float64
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		q := newQueue(b)
		signsBefore, cpuSignsBefore := rawSigns(key, fanoutSignPhase)
		b.StartTimer()
		elapsed, cpuUsed := fanout(b, q, keys, c, inboxes, fmt.Sprintf("fanout-%d", i))
		b.StopTimer()
		signsAfter, cpuSignsAfter := rawSigns(key, fanoutSignPhase)
		rate := float64(len(inboxes)) / elapsed.Seconds()
		if opts.Compare != nil {
			other, _ := fanout(b, opts.Compare(b), keys, c, inboxes, fmt.Sprintf("compare-%d", i))
			compared = append(compared, rate/(float64(len(inboxes))/other.Seconds()))
		}
		b.StartTimer()
		signs := (signsBefore + signsAfter) / 2
		rates = append(rates, rate)
		signRates = append(signRates, signs)
		ratios = append(ratios, rate/signs)
		if cpuUsed > 0 {
			cpuSigns := (cpuSignsBefore + cpuSignsAfter) / 2
			cpuRatios = append(cpuRatios, float64(len(inboxes))/cpuUsed.Seconds()/cpuSigns)
			// The share of the cores this process got during the fan-out
			// over its share while signing: sign_bound_ratio is exactly
			// sign_bound_ratio_cpu times this.
			shares = append(shares, (cpuUsed.Seconds()/elapsed.Seconds())/(signs/cpuSigns))
		}
	}
	b.StopTimer()
	peak := stopPeak()
	b.ReportMetric(median(rates), "deliveries_per_s")
	b.ReportMetric(median(signRates), "raw_signs_per_s")
	b.ReportMetric(median(ratios), "sign_bound_ratio")
	if len(cpuRatios) > 0 {
		b.ReportMetric(median(cpuRatios), "sign_bound_ratio_cpu")
		b.ReportMetric(median(shares), "cpu_share_ratio")
	}
	if len(compared) > 0 {
		b.ReportMetric(median(compared), opts.CompareMetric)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak_heap_MiB")
}

// fanout sends one activity to inboxes through a fresh Deliverer on q and
// returns the wall and CPU time until every delivery settled. Settlements
// are counted in OnSettled rather than by polling Status, so measuring adds
// no load to the queue (a database, for some).
func fanout(b *testing.B, q driver.Queue, keys deliver.SenderKeys, c *client.Client, inboxes []string, tag string) (elapsed, cpuUsed time.Duration) {
	b.Helper()
	var settled atomic.Int64
	all := make(chan struct{})
	cfg := deliver.DefaultConfig()
	cfg.OnSettled = func(_ context.Context, s deliver.Settlement) {
		if s.Result != driver.ResultDelivered {
			b.Errorf("settled %v", s)
		}
		if settled.Add(1) == int64(len(inboxes)) {
			close(all)
		}
	}
	d, err := deliver.New(q, keys, c, cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error)
	go func() { ran <- d.Run(ctx) }()
	start, cpu := time.Now(), processCPU()
	sendErr := d.SendBatch(context.Background(), fanoutKeyID, fanoutActivity, inboxes, deliver.Batch{Tag: tag})
	if sendErr == nil {
		select {
		case <-all:
			elapsed, cpuUsed = time.Since(start), processCPU()-cpu
		case <-time.After(5 * time.Minute):
			sendErr = fmt.Errorf("fan-out stalled at %d of %d settled", settled.Load(), len(inboxes))
		}
	}
	// Stop the Deliverer before any Fatal, so it never outlives the benchmark.
	cancel()
	if err := <-ran; err != nil {
		b.Fatal(err)
	}
	if sendErr != nil {
		b.Fatal(sendErr)
	}
	if st, err := d.Status(context.Background(), tag); err != nil || st.Delivered != len(inboxes) || st.Pending != 0 {
		b.Fatalf("status %+v, %v", st, err)
	}
	return elapsed, cpuUsed
}

var fanoutActivity = []byte(`{"@context":"https://www.w3.org/ns/activitystreams","id":"https://a.example/activities/bench",` +
	`"type":"Create","actor":"https://a.example/users/alice","object":"https://a.example/notes/1"}`)

// rsaKeys signs every key ID with one RSA key.
type rsaKeys struct{ key *rsa.PrivateKey }

func (k rsaKeys) Key(context.Context, string) (crypto.Signer, error) { return k.key, nil }
func (rsaKeys) Gone(context.Context, string) (bool, error)           { return false, nil }

// loopbackResolver sends every host name to 127.0.0.1, so one listener can
// stand for many hosts, each with its own connections and per-host limit.
type loopbackResolver struct{}

func (loopbackResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// rawSigns measures rsa.SignPKCS1v15 on GOMAXPROCS goroutines, the ceiling
// a signing deliverer can reach on these cores: signs per second of wall
// time and per second of this process's CPU time (zero where that is not
// measured).
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
	perSec = float64(n.Load()) / time.Since(start).Seconds()
	if used := processCPU() - cpu; used > 0 {
		perCPUSec = float64(n.Load()) / used.Seconds()
	}
	return perSec, perCPUSec
}

// PeakHeap samples the live heap objects' size every interval until stop
// is called, and stop returns the highest value seen, in bytes. Backends'
// benchmarks use it for their own peak_heap_MiB.
func PeakHeap(every time.Duration) (stop func() uint64) {
	var peak atomic.Uint64
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	quit := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(every)
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
	var once sync.Once
	return func() uint64 { once.Do(func() { close(quit) }); <-sampled; return peak.Load() }
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
