package redisseen_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/examples/relay/internal/redisseen"
	"github.com/fedkit/fedkit/examples/relay/internal/relay"
	"github.com/fedkit/fedkit/examples/relay/internal/relay/seentest"
	"github.com/fedkit/fedkit/internal/redistest"
)

var _ relay.SeenSet = (*redisseen.Store)(nil)

func TestStore(t *testing.T) {
	seentest.TestSeenSet(t, func(t *testing.T) relay.SeenSet {
		rdb, prefix := redistest.Client(t)
		return redisseen.New(rdb, &redisseen.Config{KeyPrefix: prefix})
	})
}

// TestSharedAndExpiring: a second process's Store on the same Redis sees
// the same marks, and each mark carries its window as a TTL, so it goes by
// itself.
func TestSharedAndExpiring(t *testing.T) {
	rdb, prefix := redistest.Client(t)
	ctx := context.Background()
	s := redisseen.New(rdb, &redisseen.Config{KeyPrefix: prefix})
	other := redisseen.New(rdb, &redisseen.Config{KeyPrefix: prefix})
	if ok, err := s.Mark(ctx, "activity:1", time.Hour); err != nil || !ok {
		t.Fatalf("first Mark = %v, %v; want true", ok, err)
	}
	if ok, err := other.Mark(ctx, "activity:1", time.Hour); err != nil || ok {
		t.Fatalf("Mark by another process = %v, %v; want false", ok, err)
	}
	ttl, err := rdb.PTTL(ctx, prefix+"activity:1").Result()
	if err != nil || ttl <= 0 || ttl > time.Hour {
		t.Fatalf("PTTL = %v, %v; want the window", ttl, err)
	}
}

func TestRedisDown(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer rdb.Close()
	s := redisseen.New(rdb, nil)
	if _, err := s.Mark(context.Background(), "k", time.Hour); !errors.Is(err, redisseen.ErrRedis) {
		t.Fatalf("Mark = %v; want ErrRedis", err)
	}
}
