// Package fanoutbench is the project's fan-out benchmark harness, for the
// numbers BENCHMARKS.md quotes; it is no part of the public API.
//
// BenchmarkFanout is the fan-out every Queue backend runs (one activity to
// 10,000 inboxes on 100 loopback hosts, RSA-2048, against a same-run
// rsa.SignPKCS1v15 baseline); PeakHeap samples the heap for its
// peak_heap_MiB. BenchmarkFanoutField is the same fan-out over a simulated
// fediverse (internal/fedsim: hosts that answer after 100-300 ms,
// tarpits, slow and flaky hosts), in each of FieldScenarios, reporting
// field_ratio: how close the healthy hosts' deliveries come to the ideal
// of the sign rate and the per-host limit. Its simulation runs in the
// benchmark's process, or with FieldOpts.ChildSim in a child (the test
// binary re-executed with FEDKIT_FANOUTBENCH_FIELDSIM set, serving on
// 127.0.0.1, exiting when its stdin from the parent ends), so that
// peak_heap_MiB is the Deliverer's heap alone, and with FieldOpts.SimApart
// on the cores the benchmark may not use (run it under taskset -c 0), so
// the simulated servers take no CPU from the sender. BenchmarkFieldFloor
// measures what the simulation and loopback TCP alone cost a request, the
// floor under any sender's cost besides its signatures. WorkLikeRun works a queue
// as the Deliverer's Run does, with sends that cost nothing, for the queue
// throughput benchmarks (bench/ compares pgqueue with River).
//
//	func BenchmarkFanout(b *testing.B) {
//		fanoutbench.BenchmarkFanout(b, func(*testing.B) driver.Queue { return &deliver.MemoryQueue{} }, nil)
//	}
package fanoutbench
