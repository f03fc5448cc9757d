package fanoutbench_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/internal/fanoutbench"
)

// A backend's benchmark file runs the shared fan-out benchmark on its queue,
// so every backend reports the same metrics.
func ExampleBenchmarkFanout() {
	_ = func(b *testing.B) {
		fanoutbench.BenchmarkFanout(b, func(*testing.B) driver.Queue { return &deliver.MemoryQueue{} }, nil)
	}
}

// PeakHeap samples the live heap until stopped and returns the highest
// value seen, for a benchmark's peak_heap_MiB.
func ExamplePeakHeap() {
	stop := fanoutbench.PeakHeap(2 * time.Millisecond)
	buf := make([]byte, 1<<20)
	_ = buf
	peak := stop()
	fmt.Println(peak > 0)
	// Output: true
}

// A queue throughput benchmark works its queue as Deliverer.Run does,
// with sends that cost nothing.
func ExampleWorkLikeRun() {
	ctx := context.Background()
	q := &deliver.MemoryQueue{}
	if err := q.Enqueue(ctx, &driver.Envelope{Body: []byte(`{}`), Inboxes: []string{"https://a.example/inbox", "https://b.example/inbox"}, EnqueuedAt: time.Now()}); err != nil {
		panic(err)
	}
	n, err := fanoutbench.WorkLikeRun(ctx, q, 16)
	fmt.Println(n, err)
	// Output: 2 <nil>
}

// A backend's benchmark file runs every field scenario on its queue: the
// same fan-out over a simulated fediverse of healthy, slow, flaky and tarpit
// hosts, with field_ratio against the sign rate measured in the same run.
func ExampleBenchmarkFanoutField() {
	_ = func(b *testing.B) {
		for _, sc := range fanoutbench.FieldScenarios() {
			b.Run(sc.Name, func(b *testing.B) {
				fanoutbench.BenchmarkFanoutField(b, func(*testing.B) driver.Queue { return &deliver.MemoryQueue{} }, sc, nil)
			})
		}
	}
}

// With the simulated servers on cores of their own: run the benchmark
// binary under taskset -c 0 and SimApart pins the simulation to the rest.
func ExampleFieldOpts_simApart() {
	_ = func(b *testing.B) {
		sc := fanoutbench.FieldScenarios()[0]
		fanoutbench.BenchmarkFanoutField(b, func(*testing.B) driver.Queue { return &deliver.MemoryQueue{} }, sc,
			&fanoutbench.FieldOpts{SimApart: true})
	}
}

// The floor under a field fan-out's cost besides its signatures: pre-built
// signed requests on raw connections to the same simulation.
func ExampleBenchmarkFieldFloor() {
	_ = func(b *testing.B) {
		fanoutbench.BenchmarkFieldFloor(b, fanoutbench.FieldScenarios()[0])
	}
}

// FieldScenarios are the issue's shapes: 10,000 inboxes on 500 hosts, and
// 100,000 on 5,000.
func ExampleFieldScenarios() {
	for _, sc := range fanoutbench.FieldScenarios() {
		fmt.Println(sc.Name, sc.Inboxes, sc.Hosts, sc.Latency, sc.TarpitShare)
	}
	// Output:
	// healthy-100ms 10000 500 100ms 0
	// sick-100ms 10000 500 100ms 0.05
	// healthy-300ms 10000 500 300ms 0
	// sick-300ms-100k 100000 5000 300ms 0.05
}
