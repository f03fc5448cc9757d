package driver_test

import (
	"testing"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/driver/drivertest"
)

// The example's custom Queue holds to the contract it shows.
func TestCountingQueue(t *testing.T) {
	t.Parallel()
	drivertest.TestQueue(t, func(testing.TB) driver.Queue { return &countingQueue{Queue: &deliver.MemoryQueue{}} })
}
