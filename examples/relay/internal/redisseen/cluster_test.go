package redisseen_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/fedkit/fedkit/examples/relay/internal/redisseen"
	"github.com/fedkit/fedkit/examples/relay/internal/relay"
	"github.com/fedkit/fedkit/examples/relay/internal/relay/seentest"
	"github.com/fedkit/fedkit/internal/redistest"
)

// On a 3-master Redis Cluster the seen-set passes its conformance suite:
// each mark is one key (SET NX PX), so nothing spans two slots.
func TestCluster(t *testing.T) {
	_, c, prefix := redistest.Cluster(t)
	var n atomic.Int64 // the suite's subtests run in parallel
	seentest.TestSeenSet(t, func(t *testing.T) relay.SeenSet {
		return redisseen.New(c, &redisseen.Config{KeyPrefix: fmt.Sprintf("%s%d:", prefix, n.Add(1))})
	})
}
