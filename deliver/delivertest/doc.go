// Package delivertest helps an application test its use of package
// deliver: a Recorder keeps what a Deliverer's hooks report.
//
//	var rec delivertest.Recorder
//	cfg := deliver.DefaultConfig()
//	rec.Install(cfg)
//	d, _ := deliver.New(&deliver.MemoryQueue{}, keys, c, cfg)
//	_ = d.Send(ctx, keyID, activity, inboxes)
//	_, _ = d.RunDue(ctx)
//	delivered := rec.Results()[driver.ResultDelivered]
//
// The conformance suites of the backend interfaces are in
// deliver/driver/drivertest.
//
// BenchmarkFanout is the fan-out benchmark every Queue backend runs (one
// activity to 10,000 inboxes on 100 loopback hosts, RSA-2048, against a
// same-run rsa.SignPKCS1v15 baseline), with the metrics BENCHMARKS.md quotes;
// PeakHeap samples the heap for its peak_heap_MiB. BenchmarkFanoutField is
// the same fan-out over a simulated fediverse (internal/fedsim: hosts that
// answer after 100-300 ms, tarpits, slow and flaky hosts), in each of
// FieldScenarios, reporting field_ratio: how close the healthy hosts'
// deliveries come to the ideal of the sign rate and the per-host limit.
// Its simulation runs in a child process (the test binary re-executed with
// an environment variable, serving on 127.0.0.1, exiting when its stdin
// from the parent ends), so that peak_heap_MiB is the Deliverer's heap
// alone: in one process, the simulated servers' side of some 10,000
// keep-alive connections was about 40% of the live heap of the
// 100,000-inbox scenario.
package delivertest
