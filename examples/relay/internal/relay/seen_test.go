package relay_test

import (
	"testing"

	"github.com/fedkit/fedkit/examples/relay/internal/relay"
	"github.com/fedkit/fedkit/examples/relay/internal/relay/seentest"
)

func TestMemorySeenConformance(t *testing.T) {
	seentest.TestSeenSet(t, func(*testing.T) relay.SeenSet { return relay.NewMemorySeen(nil) })
}
