package redisschemes_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/fedkit/fedkit/internal/redistest"
	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/redisschemes"
	"github.com/fedkit/fedkit/sig/sigtest"
)

// On a 3-master Redis Cluster the store passes its conformance suite:
// every call names one host's key only, so nothing spans two slots.
func TestCluster(t *testing.T) {
	_, c, prefix := redistest.Cluster(t)
	var n atomic.Int64 // a key prefix per store
	sigtest.TestLearnedSchemeStore(t, func(testing.TB) sig.LearnedSchemeStore {
		return redisschemes.New(c, &redisschemes.Config{KeyPrefix: fmt.Sprintf("%s%d:", prefix, n.Add(1))})
	})
}
