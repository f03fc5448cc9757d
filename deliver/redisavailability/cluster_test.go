package redisavailability_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/driver/drivertest"
	"github.com/fedkit/fedkit/deliver/redisavailability"
	"github.com/fedkit/fedkit/internal/redistest"
)

// On a 3-master Redis Cluster the store passes the conformance suite: the
// failure script names a host's hash and the unavailable index together,
// and both carry one hash tag, so no call spans two slots (before the tag
// the script failed with CROSSSLOT).
func TestCluster(t *testing.T) {
	_, c, prefix := redistest.Cluster(t)
	var n atomic.Int64 // the suite's subtests run in parallel
	t.Run("conformance", func(t *testing.T) {
		drivertest.TestAvailabilityStore(t, func(t testing.TB) driver.AvailabilityStore {
			return redisavailability.New(c, &redisavailability.Config{KeyPrefix: fmt.Sprintf("%s%d:", prefix, n.Add(1))})
		})
	})
	t.Run("one slot", func(t *testing.T) {
		ctx := context.Background()
		s := redisavailability.New(c, &redisavailability.Config{KeyPrefix: prefix + "slot:"})
		rule := driver.AvailabilityRule{Days: 1}
		now := time.Date(2031, 7, 1, 12, 0, 0, 0, time.UTC)
		for i := range 20 {
			if _, _, err := s.Failure(ctx, fmt.Sprintf("h%d.example", i), now, rule); err != nil {
				t.Fatalf("Failure on a cluster: %v", err)
			}
		}
		// The keys as the package doc names them: all on one slot.
		keys := []string{prefix + "slot:{availability}:unavailable"}
		for i := range 20 {
			keys = append(keys, fmt.Sprintf("%sslot:{availability}:h:h%d.example", prefix, i))
		}
		for _, k := range keys {
			if n, err := c.Exists(ctx, k).Result(); err != nil || n != 1 {
				t.Fatalf("%s: exists %d, %v", k, n, err)
			}
		}
		slots, err := redistest.Slots(ctx, c, keys...)
		if err != nil {
			t.Fatal(err)
		}
		if len(slots) != 1 {
			t.Fatalf("%d keys in %d slots; want one", len(keys), len(slots))
		}
	})
}
