// Package redistest gives each test a real Redis and a key prefix of its own.
//
// The server is found in this order: FEDKIT_TEST_REDIS_URL; a server on
// 127.0.0.1:6379; a throwaway redis-server. Without any of them the test is
// skipped with a hint, or fails when CI=true.
//
// A failure test takes a server of its own instead (Server), which it may
// kill -9 and restart (Restart), or a 3-master Redis Cluster (Cluster).
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/internal/fixture"
	"github.com/fedkit/fedkit/internal/testserver"
)

var (
	once    sync.Once
	opts    *redis.Options
	findErr error
)

// Options returns connection options for the test server.
func Options(t testing.TB) *redis.Options {
	t.Helper()
	once.Do(func() {
		if u := os.Getenv("FEDKIT_TEST_REDIS_URL"); u != "" {
			opts, findErr = redis.ParseURL(u)
			return
		}
		if testserver.Reachable("127.0.0.1:6379") {
			opts = &redis.Options{Addr: "127.0.0.1:6379"}
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var addr string
		addr, findErr = testserver.StartRedis(ctx)
		if findErr == nil {
			opts = &redis.Options{Addr: addr}
		}
	})
	if opts == nil {
		fixture.Missing(t, fmt.Sprintf("no Redis: set FEDKIT_TEST_REDIS_URL, run one on 127.0.0.1:6379, or install redis-server (%v)", findErr))
	}
	o := *opts
	return &o
}

// URL returns a redis:// URL of the test server, for a child process the
// test starts: set it as FEDKIT_TEST_REDIS_URL in the child's environment so
// the child uses this server, not a throwaway of its own.
func URL(t testing.TB) string {
	t.Helper()
	o := Options(t)
	u := "redis://"
	if o.Username != "" || o.Password != "" {
		u += url.UserPassword(o.Username, o.Password).String() + "@"
	}
	return fmt.Sprintf("%s%s/%d", u, o.Addr, o.DB)
}

// Client returns a client and a key prefix unique to this test. Every key
// under the prefix is deleted, and the client closed, when the test ends.
func Client(t testing.TB) (*redis.Client, string) {
	t.Helper()
	c := redis.NewClient(Options(t))
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "fedkit-test:" + hex.EncodeToString(b[:]) + ":"
	t.Cleanup(func() {
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := DeletePrefix(ctx, c, prefix); err != nil {
			t.Errorf("redistest: cleanup %s: %v", prefix, err)
		}
	})
	return c, prefix
}

// DeletePrefix removes every key starting with prefix, on every master of
// a cluster.
func DeletePrefix(ctx context.Context, c redis.UniversalClient, prefix string) error {
	if cc, ok := c.(*redis.ClusterClient); ok {
		// SCAN sees one node's keys, and a DEL of several keys must name one
		// slot: scan each master, delete key by key.
		return cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			iter := m.Scan(ctx, 0, prefix+"*", 500).Iterator()
			for iter.Next(ctx) {
				if err := m.Del(ctx, iter.Val()).Err(); err != nil {
					return err
				}
			}
			return iter.Err()
		})
	}
	iter := c.Scan(ctx, 0, prefix+"*", 500).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
		if len(keys) == 500 {
			if err := c.Del(ctx, keys...).Err(); err != nil {
				return err
			}
			keys = keys[:0]
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if len(keys) > 0 {
		return c.Del(ctx, keys...).Err()
	}
	return nil
}
