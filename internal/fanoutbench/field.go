package fanoutbench

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/internal/fedsim"
)

// FieldScenario is one fan-out over a simulated fediverse (internal/fedsim)
// for BenchmarkFanoutField.
type FieldScenario struct {
	// Name names the sub-benchmark.
	Name string
	// Inboxes are spread evenly over Hosts.
	Inboxes, Hosts int
	// Latency (± Jitter) is how long a healthy host takes to answer.
	Latency, Jitter time.Duration
	// TarpitShare of the hosts accept and never answer; SlowShare answer
	// after Slow; FlakyShare answer 500 with probability FlakyP.
	TarpitShare, SlowShare, FlakyShare float64
	Slow                               time.Duration
	FlakyP                             float64
}

// FieldScenarios returns the scenarios of the field-grade delivery issue:
// 10,000 inboxes on 500 hosts answering after 100 ms, all healthy and with
// 5% tarpits, 2% answering after 3 s and 1% failing half the time; all
// healthy at 300 ms; and 100,000 inboxes on 5,000 hosts at 300 ms with the
// same sick shares.
func FieldScenarios() []FieldScenario {
	sick := func(s FieldScenario) FieldScenario {
		s.TarpitShare, s.SlowShare, s.FlakyShare, s.Slow, s.FlakyP = 0.05, 0.02, 0.01, 3*time.Second, 0.5
		return s
	}
	return []FieldScenario{
		{Name: "healthy-100ms", Inboxes: 10_000, Hosts: 500, Latency: 100 * time.Millisecond},
		sick(FieldScenario{Name: "sick-100ms", Inboxes: 10_000, Hosts: 500, Latency: 100 * time.Millisecond}),
		{Name: "healthy-300ms", Inboxes: 10_000, Hosts: 500, Latency: 300 * time.Millisecond},
		sick(FieldScenario{Name: "sick-300ms-100k", Inboxes: 100_000, Hosts: 5_000, Latency: 300 * time.Millisecond}),
	}
}

// FieldOpts adds to BenchmarkFanoutField; nil means none.
type FieldOpts struct {
	// Config, when set, edits the Deliverer's Config (the default one
	// otherwise), to measure a setting against the defaults.
	Config func(*deliver.Config)
	// ChildSim runs the simulated fediverse in a child process (this test
	// binary, re-executed) instead of in the benchmark's own, so that
	// peak_heap_MiB is the Deliverer's alone. Defaults to false: in
	// process, where the simulation's connections count in peak_heap_MiB
	// but cost less CPU. A child on the same cores wakes for every request
	// and answer, and each wake-up is a switch between processes that
	// preempts a signer: on two cores it cost the fan-out about a tenth
	// of field_ratio, CPU the real fediverse's servers do not take from
	// the sender.
	ChildSim bool
	// SimApart runs the simulation child (as ChildSim does) on the online
	// cores this process may not use: run the benchmark under taskset -c 0
	// (Linux) and the simulated servers get the other cores, as real
	// remote servers take no CPU from the sender. The raw sign rate, and
	// so the ideal, is then this process's cores' alone, and
	// cpu_per_delivery_ratio counts this process's CPU only: the sender's
	// own cost. The benchmark is skipped when this process may use every
	// core.
	SimApart bool
}

// profile gives host i of n its profile, spreading each sick kind over
// the host list rather than bunching it.
func (sc FieldScenario) profile(i int) fedsim.Profile {
	n := sc.Hosts
	r := (i * 7919) % n // 7919 is prime: a permutation for n it does not divide
	tarpits := int(math.Round(sc.TarpitShare * float64(n)))
	slows := int(math.Round(sc.SlowShare * float64(n)))
	flakies := int(math.Round(sc.FlakyShare * float64(n)))
	switch {
	case r < tarpits:
		return fedsim.Tarpit()
	case r < tarpits+slows:
		return fedsim.Slow(sc.Slow)
	case r < tarpits+slows+flakies:
		return fedsim.Flaky(sc.Latency, sc.Jitter, sc.FlakyP)
	}
	return fedsim.Healthy(sc.Latency, sc.Jitter)
}

// BenchmarkFanoutField sends one activity, signed with RSA-2048, to
// sc.Inboxes inboxes on sc.Hosts hosts of a simulated fediverse through a
// Deliverer with the default Config on the queue newQueue returns (called
// once per iteration, off the timer; it must return an empty queue). Every
// host name resolves to one loopback listener that plays each host from
// the Host header, as sc's profiles say.
//
// It reports, as medians over iterations: field_s, the time until every
// delivery to a healthy host settled delivered; half_s, the time to half
// of them; deliveries_per_s, healthy deliveries over field_s;
// raw_signs_per_s, raw rsa.SignPKCS1v15 signs per second on as many
// goroutines as cores, measured for 2 s right before and after each
// fan-out; field_ratio, ideal over field_s, where ideal is
// max(healthy inboxes / raw signs per second, healthy inboxes / (healthy
// hosts × per-host limit / latency)); peak_heap_MiB, the peak of live
// heap objects in the benchmark's process: the Deliverer's, its queue's
// and client's, the inbox list's and the simulation's server side (with
// FieldOpts.ChildSim, the simulation's is not in it); and, where process
// CPU time is measured, cpu_share_ratio, the share of the cores the
// process (and a simulation child) got during the fan-out over the
// process's share while signing: on a loaded machine a value well below 1
// with a CPU-bound fan-out says the load, not the Deliverer, kept
// field_ratio down (when the fan-out waits on the network instead, it
// falls below 1 on its own); and cpu_per_delivery_ratio, the process's
// CPU during the fan-out (the simulation's included) per healthy delivery
// over the CPU of one raw signature: with all hosts healthy, where every
// delivery is one signed request, the part above 1 is what a delivery
// costs besides its signature, on both sides of the loopback (with sick
// hosts it also counts their signatures and timeouts).
func BenchmarkFanoutField(b *testing.B, newQueue func(b *testing.B) driver.Queue, sc FieldScenario, opts *FieldOpts) {
	b.Helper()
	if opts == nil {
		opts = &FieldOpts{}
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	var cpus string
	if opts.SimApart {
		if cpus, err = apartCPUs(); err != nil {
			b.Skip(err)
		}
	}
	sim, err := startFieldSim(sc, !opts.ChildSim && !opts.SimApart, cpus)
	if err != nil {
		b.Fatal(err)
	}
	simCPU := sim.cpu
	if opts.SimApart {
		simCPU = func() time.Duration { return 0 } // on other cores: not the sender's
	}
	defer func() {
		if err := sim.close(); err != nil {
			b.Errorf("closing the simulation: %v", err)
		}
	}()
	port := strconv.Itoa(sim.port)
	healthyHost := make(map[string]bool, sc.Hosts)
	healthyHosts := 0
	for i := range sc.Hosts {
		if p := sc.profile(i); p.Healthy() && p.Latency == sc.Latency {
			healthyHost[fieldHostName(i)+":"+port] = true
			healthyHosts++
		}
	}
	inboxes := make([]string, sc.Inboxes)
	healthy := 0
	for i := range inboxes {
		hostport := fieldHostName(i%sc.Hosts) + ":" + port
		inboxes[i] = "http://" + hostport + fmt.Sprintf("/users/u%d/inbox", i)
		if healthyHost[hostport] {
			healthy++
		}
	}
	keys := deliver.NewCachingSenderKeys(rsaKeys{key}, nil)

	runtime.GC()
	stopPeak := PeakHeap(5 * time.Millisecond)
	defer stopPeak()
	var fields, halves, rates, signRates, ratios, shares, costs []float64
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		q := newQueue(b)
		c, err := client.New(&client.Config{AllowPrivate: fedsim.Loopback, Resolver: fedsim.Resolver{}})
		if err != nil {
			b.Fatal(err)
		}
		signsBefore, cpuSignsBefore := rawSigns(key, fanoutSignPhase)
		b.StartTimer()
		cpu := processCPU() + simCPU()
		field, half := fieldFanout(b, q, keys, c, inboxes, healthyHost, healthy, opts, fmt.Sprintf("field-%d", i))
		b.StopTimer()
		cpuUsed := processCPU() + simCPU() - cpu
		c.CloseIdleConnections()
		signsAfter, cpuSignsAfter := rawSigns(key, fanoutSignPhase)
		b.StartTimer()
		signs := (signsBefore + signsAfter) / 2
		perHost := deliver.PerHostDefault
		ideal := max(float64(healthy)/signs, float64(healthy)/(float64(healthyHosts*perHost)/sc.Latency.Seconds()))
		fields = append(fields, field.Seconds())
		halves = append(halves, half.Seconds())
		rates = append(rates, float64(healthy)/field.Seconds())
		signRates = append(signRates, signs)
		ratios = append(ratios, ideal/field.Seconds())
		if cpuUsed > 0 && cpuSignsBefore > 0 && cpuSignsAfter > 0 {
			cpuSigns := (cpuSignsBefore + cpuSignsAfter) / 2
			shares = append(shares, (cpuUsed.Seconds()/field.Seconds())/(signs/cpuSigns))
			costs = append(costs, cpuUsed.Seconds()/float64(healthy)*cpuSigns)
		}
	}
	b.StopTimer()
	peak := stopPeak()
	b.ReportMetric(median(ratios), "field_ratio")
	b.ReportMetric(median(fields), "field_s")
	b.ReportMetric(median(halves), "half_s")
	b.ReportMetric(median(rates), "deliveries_per_s")
	b.ReportMetric(median(signRates), "raw_signs_per_s")
	b.ReportMetric(float64(peak)/(1<<20), "peak_heap_MiB")
	if len(shares) > 0 {
		b.ReportMetric(median(shares), "cpu_share_ratio")
		b.ReportMetric(median(costs), "cpu_per_delivery_ratio")
	}
}

// fieldFanout sends one activity to inboxes through a fresh Deliverer on q
// and returns the time until the healthy hosts' deliveries (want of them)
// all settled delivered, and until half of them did. The rest are left
// undone: the Deliverer stops then.
func fieldFanout(b *testing.B, q driver.Queue, keys deliver.SenderKeys, c *client.Client, inboxes []string,
	healthyHost map[string]bool, want int, opts *FieldOpts, tag string) (field, half time.Duration) {
	b.Helper()
	var settled atomic.Int64
	var halfAt atomic.Int64
	all := make(chan struct{})
	var once sync.Once
	var start time.Time
	cfg := deliver.DefaultConfig()
	// Once the healthy hosts are done the measurement is over: do not wait
	// out the sick hosts' requests.
	cfg.ShutdownGrace = time.Second
	if opts.Config != nil {
		opts.Config(cfg)
	}
	onSettled := cfg.OnSettled
	cfg.OnSettled = func(ctx context.Context, s deliver.Settlement) {
		if onSettled != nil {
			onSettled(ctx, s)
		}
		if !healthyHost[s.Host] {
			return
		}
		if s.Result != driver.ResultDelivered {
			b.Errorf("healthy host's delivery settled %v: %v", s.Result, s.Err)
		}
		n := settled.Add(1)
		if n == int64(want+1)/2 {
			halfAt.Store(int64(time.Since(start)))
		}
		if n == int64(want) {
			once.Do(func() { close(all) })
		}
	}
	d, err := deliver.New(q, keys, c, cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- d.Run(ctx) }()
	start = time.Now()
	sendErr := d.SendBatch(context.Background(), fanoutKeyID, fanoutActivity, inboxes, deliver.Batch{Tag: tag})
	if sendErr == nil {
		select {
		case <-all:
			field = time.Since(start)
		case <-time.After(10 * time.Minute):
			sendErr = fmt.Errorf("field fan-out stalled at %d of %d healthy deliveries", settled.Load(), want)
		}
	}
	cancel()
	// Cut the sick hosts' requests short rather than wait out the grace.
	c.CloseIdleConnections()
	if err := <-ran; err != nil {
		b.Fatal(err)
	}
	if sendErr != nil {
		b.Fatal(sendErr)
	}
	return field, time.Duration(halfAt.Load())
}
