package drivertest_test

import (
	"testing"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/driver/drivertest"
)

// A backend's test file runs the suite against a fresh queue per subtest.
func ExampleTestQueue() {
	_ = func(t *testing.T) {
		drivertest.TestQueue(t, func(t testing.TB) driver.Queue { return &deliver.MemoryQueue{} })
	}
}

func ExampleTestBreakerStore() {
	_ = func(t *testing.T) {
		drivertest.TestBreakerStore(t, func(t testing.TB) driver.BreakerStore { return &deliver.MemoryBreakerStore{} })
	}
}

func ExampleTestAvailabilityStore() {
	_ = func(t *testing.T) {
		drivertest.TestAvailabilityStore(t, func(t testing.TB) driver.AvailabilityStore {
			return deliver.NewMemoryAvailabilityStore(0)
		})
	}
}
