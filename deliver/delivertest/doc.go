// Package delivertest holds the conformance suites every deliver.Queue,
// deliver.BreakerStore, deliver.SchemeStore and deliver.AvailabilityStore
// implementation must pass (TestAvailabilityStore with caller clocks in
// 2019 and 2031), and
// a Recorder of a Deliverer's hooks for applications' tests.
//
// A backend's test calls them with a constructor for an empty store:
//
//	func TestQueue(t *testing.T) {
//		delivertest.TestQueue(t, func(t *testing.T) deliver.Queue {
//			q, err := pgqueue.New(pgtest.Pool(t), nil) // a fresh schema per subtest
//			if err != nil {
//				t.Fatal(err)
//			}
//			if err := q.Migrate(t.Context()); err != nil {
//				t.Fatal(err)
//			}
//			return q
//		})
//	}
//
//	func TestBreakerStore(t *testing.T) {
//		delivertest.TestBreakerStore(t, func(t *testing.T) deliver.BreakerStore {
//			c, prefix := redistest.Client(t)
//			return redisbreaker.New(c, &redisbreaker.Config{KeyPrefix: prefix})
//		})
//	}
//
// The suites pass explicit times to the store (deliver.ClaimOpts.Now, the
// now of Admit and Record) and never sleep.
//
// BenchmarkFanout is the fan-out benchmark every Queue backend runs (one
// activity to 10,000 inboxes on 100 loopback hosts, RSA-2048, against a
// same-run rsa.SignPKCS1v15 baseline), with the metrics BENCHMARKS.md quotes;
// PeakHeap samples the heap for its peak_heap_MiB. BenchmarkFanoutField is
// the same fan-out over a simulated fediverse (internal/fedsim: hosts that
// answer after 100-300 ms, tarpits, slow and flaky hosts), in each of
// FieldScenarios, reporting field_ratio: how close the healthy hosts'
// deliveries come to the ideal of the sign rate and the per-host limit.
package delivertest
