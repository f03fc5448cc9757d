package deliver_test

import (
	"testing"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/delivertest"
)

func TestMemoryQueueConformance(t *testing.T) {
	delivertest.TestQueue(t, func(t *testing.T) deliver.Queue { return &deliver.MemoryQueue{} })
}

func TestMemoryBreakerStoreConformance(t *testing.T) {
	delivertest.TestBreakerStore(t, func(t *testing.T) deliver.BreakerStore { return &deliver.MemoryBreakerStore{} })
}

func TestMemorySchemeStoreConformance(t *testing.T) {
	delivertest.TestSchemeStore(t, func(t *testing.T) deliver.SchemeStore { return deliver.NewMemorySchemeStore(0) })
}
