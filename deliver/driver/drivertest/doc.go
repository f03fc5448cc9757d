// Package drivertest holds the conformance suites every implementation of
// package driver's interfaces passes: TestQueue for a driver.Queue,
// TestBreakerStore for a driver.BreakerStore (and its BreakerCounter, if
// it has one), TestAvailabilityStore for a driver.AvailabilityStore, with
// caller clocks in 2019 and 2031.
//
// Each takes a testing.TB and a constructor returning an empty store for
// each subtest. Under a *testing.T the cases run as parallel subtests
// (TestAvailabilityStore's in sequence), so the constructor may be called
// concurrently; under another testing.TB they run one after the other.
//
//	func TestBreakerStore(t *testing.T) {
//		drivertest.TestBreakerStore(t, func(t testing.TB) driver.BreakerStore {
//			c, prefix := redistest.Client(t)
//			return redisbreaker.New(c, &redisbreaker.Config{KeyPrefix: prefix})
//		})
//	}
//
// The suites pass explicit times to the store (ClaimOpts.Now, the now of
// Admit, Record and Failure) and never sleep.
package drivertest
