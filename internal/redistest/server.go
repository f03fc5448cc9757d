package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/internal/fixture"
	"github.com/fedkit/fedkit/internal/testserver"
)

// Server starts a redis-server of the test's own, which the test may kill
// and restart (testserver.Server's Kill, Stop and Start); the machine's
// shared server is never used. extra are redis-server arguments, such as
// "--appendonly", "yes" for a server that keeps its data across a SIGKILL.
// It is killed when the test ends. Without the binary the test is skipped,
// or fails when CI=true.
func Server(t testing.TB, extra ...string) *testserver.Server {
	t.Helper()
	if testserver.FindBinary("redis-server") == "" {
		fixture.Missing(t, "no redis-server binary: install redis-server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := testserver.NewRedis(ctx, extra...)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// Restart brings s back after a Kill or Stop, failing the test if it cannot.
func Restart(t testing.TB, s *testserver.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatalf("redistest: restart: %v", err)
	}
}

// Cluster starts a 3-master Redis Cluster of the test's own and returns it,
// a cluster client on it (a redis.UniversalClient built from several
// addresses, as an application would) and a key prefix. The client is
// closed and the cluster killed when the test ends. Without redis-server
// and redis-cli (Debian's redis-tools) the test is skipped, or fails when
// CI=true.
func Cluster(t testing.TB) (*testserver.Cluster, redis.UniversalClient, string) {
	t.Helper()
	if testserver.FindBinary("redis-server") == "" || testserver.FindBinary("redis-cli") == "" {
		fixture.Missing(t, "no redis-server / redis-cli binary: install redis-server and redis-tools")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := testserver.NewCluster(ctx)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(cl.Close)
	c := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: cl.Addrs})
	t.Cleanup(func() { c.Close() })
	var b [6]byte
	_, _ = rand.Read(b[:])
	return cl, c, "fedkit-test:" + hex.EncodeToString(b[:]) + ":"
}

// Slots returns the cluster hash slot of each key, for a test that proves
// a set of keys shares one slot (as every multi-key command in a cluster
// must).
func Slots(ctx context.Context, c redis.UniversalClient, keys ...string) (map[int64][]string, error) {
	out := map[int64][]string{}
	for _, k := range keys {
		slot, err := c.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			return nil, err
		}
		out[slot] = append(out[slot], k)
	}
	return out, nil
}
