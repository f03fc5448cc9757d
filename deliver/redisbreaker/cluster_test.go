package redisbreaker_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/driver/drivertest"
	"github.com/fedkit/fedkit/deliver/redisbreaker"
	"github.com/fedkit/fedkit/internal/redistest"
)

// On a 3-master Redis Cluster, through a redis.UniversalClient built from
// the masters' addresses, the store passes the conformance suite, and
// Lights finds the lights of every master. Each light is one key, and
// each script names only that key, so nothing spans two slots.
func TestCluster(t *testing.T) {
	_, c, prefix := redistest.Cluster(t)
	if _, ok := c.(*redis.ClusterClient); !ok {
		t.Fatalf("UniversalClient from %d addresses is a %T, want a cluster client", 3, c)
	}
	var n atomic.Int64 // the suite's subtests run in parallel
	t.Run("conformance", func(t *testing.T) {
		drivertest.TestBreakerStore(t, func(t testing.TB) driver.BreakerStore {
			return redisbreaker.New(c, &redisbreaker.Config{KeyPrefix: fmt.Sprintf("%s%d:", prefix, n.Add(1))})
		})
	})
	t.Run("lights on every master", func(t *testing.T) {
		ctx := context.Background()
		s := redisbreaker.New(c, &redisbreaker.Config{KeyPrefix: prefix + "lights:"})
		now := time.UnixMilli(1_700_000_000_000)
		names := map[string]bool{}
		for i := range 60 {
			name := fmt.Sprintf("h%d.example", i)
			names[name] = true
			if err := s.Record(ctx, name, false, false, now, rule); err != nil {
				t.Fatal(err)
			}
		}
		open(t, s, "https://c.example/inbox", now)
		keys := []string{s.Key("https://c.example/inbox")}
		for name := range names {
			keys = append(keys, s.Key(name))
		}
		slots, err := redistest.Slots(ctx, c, keys...)
		if err != nil {
			t.Fatal(err)
		}
		masters := map[string]bool{}
		for slot := range slots {
			m, err := masterOf(ctx, c.(*redis.ClusterClient), slot)
			if err != nil {
				t.Fatal(err)
			}
			masters[m] = true
		}
		if len(masters) != 3 {
			t.Fatalf("61 lights on %d masters; the test wants all three", len(masters))
		}
		ls, err := s.Lights(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ls) != 61 || ls[0].Name != "h0.example" || ls[len(ls)-1].Name != "https://c.example/inbox" ||
			ls[len(ls)-1].Color(now) != driver.LightRed {
			t.Fatalf("Lights on the cluster: %d lights (first %+v), want 61 with c.example's inbox red", len(ls), ls[0])
		}
		if err := redistest.DeletePrefix(ctx, c, prefix); err != nil {
			t.Fatal(err)
		}
	})
}

// masterOf returns the ID of the master serving slot.
func masterOf(ctx context.Context, c *redis.ClusterClient, slot int64) (string, error) {
	shards, err := c.ClusterShards(ctx).Result()
	if err != nil {
		return "", err
	}
	for _, sh := range shards {
		for _, r := range sh.Slots {
			if r.Start <= slot && slot <= r.End {
				for _, n := range sh.Nodes {
					if n.Role == "master" {
						return n.ID, nil
					}
				}
			}
		}
	}
	return "", fmt.Errorf("no master for slot %d", slot)
}
