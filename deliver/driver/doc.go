// Package driver is what a backend of package deliver implements, kept
// apart from what an application calls as River keeps riverdriver apart
// from river: a Queue that stores deliveries (and, optionally, a Notifier
// that wakes Run and a DepthCounter for the queue depth gauge), a
// BreakerStore that keeps the circuit breakers (optionally a
// BreakerCounter), an AvailabilityStore that remembers failing hosts, and
// the types they trade with the Deliverer. Package drivertest holds the
// conformance suites every implementation passes.
//
// An application needs this package only for the types both sides share:
// a Batch's Lane, a Settlement's Result, the BatchStatus that Status
// returns, the DropFilter that Drop takes, and the errors a Queue returns
// through the Deliverer (ErrQueueUnavailable, ErrEmptyDropFilter).
//
// The Deliverer keeps the clock. Every time a backend stores or compares
// comes from its caller (ClaimOpts.Now, Envelope.EnqueuedAt,
// Outcome.RetryAt, the now of Admit, Record and Failure, the clock Notify
// is given), so a backend never reads a clock of its own to decide
// anything, and a test that sets the Deliverer's Config.Now sets the
// backend's too.
//
//	func TestQueue(t *testing.T) {
//		drivertest.TestQueue(t, func(t testing.TB) driver.Queue {
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
// The backends in this module: deliver/pgqueue (Queue, Notifier,
// DepthCounter on Postgres), deliver/redisbreaker (BreakerStore,
// BreakerCounter on Redis), deliver/redisavailability and
// deliver/pgavailability (AvailabilityStore); package deliver's
// MemoryQueue, MemoryBreakerStore and MemoryAvailabilityStore are the
// in-memory defaults and the reference behaviour.
package driver
