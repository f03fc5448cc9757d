package delivertest_test

import (
	"testing"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/delivertest"
)

// A backend's test file runs the suites against a fresh store per subtest.
func ExampleTestQueue() {
	_ = func(t *testing.T) {
		delivertest.TestQueue(t, func(t *testing.T) deliver.Queue { return &deliver.MemoryQueue{} })
	}
}

func ExampleTestBreakerStore() {
	_ = func(t *testing.T) {
		delivertest.TestBreakerStore(t, func(t *testing.T) deliver.BreakerStore { return &deliver.MemoryBreakerStore{} })
	}
}

func ExampleRecorder() {
	var rec delivertest.Recorder
	cfg := deliver.DefaultConfig()
	rec.Install(cfg)
	// d, _ := deliver.New(queue, keys, client, cfg); d.Send(...); d.RunDue(ctx)
	_ = rec.Results()[deliver.ResultDelivered]
}

func ExampleTestSchemeStore() {
	_ = func(t *testing.T) {
		delivertest.TestSchemeStore(t, func(t *testing.T) deliver.SchemeStore { return deliver.NewMemorySchemeStore(0) })
	}
}
