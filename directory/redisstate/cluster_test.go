package redisstate_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/directorytest"
	"github.com/fedkit/fedkit/directory/redisstate"
	"github.com/fedkit/fedkit/internal/redistest"
)

// On a 3-master Redis Cluster, through a redis.UniversalClient built from
// the masters' addresses, the store passes the conformance suite; the
// lease and state keys of each origin share one hash slot (the save script
// names both), while different origins spread over every master.
func TestCluster(t *testing.T) {
	_, c, prefix := redistest.Cluster(t)
	var n atomic.Int64 // the suite's subtests run in parallel
	t.Run("conformance", func(t *testing.T) {
		directorytest.TestStateStore(t, func(t testing.TB) directory.StateStore {
			s, err := redisstate.New(c, &redisstate.Config{KeyPrefix: fmt.Sprintf("%s%d:", prefix, n.Add(1))})
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
	t.Run("one slot per origin", func(t *testing.T) {
		ctx := context.Background()
		p := prefix + "slots:"
		s, err := redisstate.New(c, &redisstate.Config{KeyPrefix: p})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 30 {
			o := fmt.Sprintf("https://directory%d.example", i)
			tok, err := s.Acquire(ctx, o, directory.LeaseTTLDefault)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Save(ctx, o, tok, directory.StateRecord{State: directory.StateConfigured}); err != nil {
				t.Fatal(err)
			}
		}
		// Every key, from every master, grouped by origin (its hash tag).
		var mu sync.Mutex
		byOrigin := map[string][]string{}
		masters := map[string]bool{}
		err = c.(*redis.ClusterClient).ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			keys, err := m.Keys(ctx, p+"*").Result()
			mu.Lock()
			defer mu.Unlock()
			for _, k := range keys {
				tag := k[strings.Index(k, "{") : strings.Index(k, "}")+1]
				byOrigin[tag] = append(byOrigin[tag], k)
				masters[m.Options().Addr] = true
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(byOrigin) != 30 || len(masters) != 3 {
			t.Fatalf("%d origins on %d masters, want 30 spread over all 3", len(byOrigin), len(masters))
		}
		for tag, keys := range byOrigin {
			slots, err := redistest.Slots(ctx, c, keys...)
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 2 || len(slots) != 1 {
				t.Fatalf("origin %s: keys %q in slots %v, want its lease and state in one slot", tag, keys, slots)
			}
		}
		if err := redistest.DeletePrefix(ctx, c, prefix); err != nil {
			t.Fatal(err)
		}
	})
}
