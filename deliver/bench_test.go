package deliver_test

import (
	"fmt"
	"testing"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/internal/fanoutbench"
)

// BenchmarkFanout sends one activity to 10,000 inboxes on 100 loopback hosts
// that answer 202 at once, signed with RSA-2048, through a MemoryQueue.
// fanoutbench.BenchmarkFanout says what each metric means; sign_bound_ratio
// is deliveries/s over raw rsa.SignPKCS1v15 signs/s on as many goroutines as
// cores, measured right before and right after each fan-out.
func BenchmarkFanout(b *testing.B) {
	fanoutbench.BenchmarkFanout(b, func(*testing.B) driver.Queue { return &deliver.MemoryQueue{} }, nil)
}

// BenchmarkFanoutField sends one activity, signed with RSA-2048, through a
// MemoryQueue over a simulated fediverse (internal/fedsim), in each of
// fanoutbench.FieldScenarios: 10,000 inboxes on 500 hosts at 100 ms, all
// healthy or with 5% tarpits, 2% slow (3 s) and 1% flaky hosts; all
// healthy at 300 ms; 100,000 inboxes on 5,000 hosts at 300 ms with the sick
// shares. field_ratio is the ideal time over the measured one for the
// healthy hosts' deliveries (fanoutbench.BenchmarkFanoutField). The
// simulation runs in this process on loopback, so peak_heap_MiB counts the
// simulated servers' side of the connections too.
func BenchmarkFanoutField(b *testing.B) {
	for _, sc := range fanoutbench.FieldScenarios() {
		b.Run(sc.Name, func(b *testing.B) {
			fanoutbench.BenchmarkFanoutField(b, func(*testing.B) driver.Queue { return &deliver.MemoryQueue{} }, sc, nil)
		})
	}
}

// BenchmarkFieldFloor is the floor under BenchmarkFanoutField's cost
// outside the signatures, in its healthy scenarios: pre-built signed
// requests on raw connections to the same simulation, no HTTP client, no
// queue (fanoutbench.BenchmarkFieldFloor). floor_cpu_ratio is its CPU per
// request over a raw signature's.
func BenchmarkFieldFloor(b *testing.B) {
	for _, sc := range fanoutbench.FieldScenarios() {
		if sc.Name != "healthy-100ms" && sc.Name != "healthy-300ms" {
			continue
		}
		b.Run(sc.Name, func(b *testing.B) { fanoutbench.BenchmarkFieldFloor(b, sc) })
	}
}

// BenchmarkFanoutFieldChild is BenchmarkFanoutField with the simulation in
// a child process: peak_heap_MiB is then the Deliverer's alone (field_ratio
// reads lower: see fanoutbench.FieldOpts.ChildSim).
func BenchmarkFanoutFieldChild(b *testing.B) {
	for _, sc := range fanoutbench.FieldScenarios() {
		b.Run(sc.Name, func(b *testing.B) {
			fanoutbench.BenchmarkFanoutField(b, func(*testing.B) driver.Queue { return &deliver.MemoryQueue{} }, sc,
				&fanoutbench.FieldOpts{ChildSim: true})
		})
	}
}

// BenchmarkFanoutFieldApart is BenchmarkFanoutField with the simulation
// in a child process on cores of its own, as real remote servers take no
// CPU from the sender. Run it under taskset -c 0 (Linux): the child is
// pinned to the other cores, the raw sign rate is measured on core 0
// alone, and cpu_per_delivery_ratio is the sender's own cost
// (fanoutbench.FieldOpts.SimApart). Skipped when the process may use
// every core.
func BenchmarkFanoutFieldApart(b *testing.B) {
	for _, sc := range fanoutbench.FieldScenarios() {
		b.Run(sc.Name, func(b *testing.B) {
			fanoutbench.BenchmarkFanoutField(b, func(*testing.B) driver.Queue { return &deliver.MemoryQueue{} }, sc,
				&fanoutbench.FieldOpts{SimApart: true})
		})
	}
}

// BenchmarkFanoutFieldConcurrency is the tuned row: the sick-hosts
// scenario with Concurrency set by hand, against which the default is
// judged (an application should not have to tune it).
func BenchmarkFanoutFieldConcurrency(b *testing.B) {
	for _, sc := range fanoutbench.FieldScenarios() {
		if sc.Name != "sick-100ms" {
			continue
		}
		for _, n := range []int{1024, deliver.ConcurrencyDefault} {
			b.Run(fmt.Sprintf("%s/concurrency-%d", sc.Name, n), func(b *testing.B) {
				fanoutbench.BenchmarkFanoutField(b, func(*testing.B) driver.Queue { return &deliver.MemoryQueue{} }, sc,
					&fanoutbench.FieldOpts{Config: func(c *deliver.Config) { c.Concurrency = n }})
			})
		}
	}
}
