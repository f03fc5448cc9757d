package redisseen_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/examples/relay/internal/redisseen"
	"github.com/fedkit/fedkit/examples/relay/internal/relay"
	"github.com/fedkit/fedkit/internal/redistest"
)

var _ relay.SeenSet = (*redisseen.Store)(nil)

func TestStore(t *testing.T) {
	rdb, prefix := redistest.Client(t)
	ctx := context.Background()
	s := redisseen.New(rdb, &redisseen.Config{KeyPrefix: prefix})
	// A second process's Store on the same Redis sees the same marks.
	other := redisseen.New(rdb, &redisseen.Config{KeyPrefix: prefix})

	if ok, err := s.Mark(ctx, "activity:1", time.Hour); err != nil || !ok {
		t.Fatalf("first Mark = %v, %v; want true", ok, err)
	}
	if ok, err := other.Mark(ctx, "activity:1", time.Hour); err != nil || ok {
		t.Fatalf("Mark by another process = %v, %v; want false", ok, err)
	}
	if has, err := other.Has(ctx, "activity:1"); err != nil || !has {
		t.Fatalf("Has = %v, %v; want true", has, err)
	}
	ttl, err := rdb.PTTL(ctx, prefix+"activity:1").Result()
	if err != nil || ttl <= 0 || ttl > time.Hour {
		t.Fatalf("PTTL = %v, %v; want the window, so the mark goes by itself", ttl, err)
	}
	if err := s.Forget(ctx, "activity:1"); err != nil {
		t.Fatal(err)
	}
	if has, _ := s.Has(ctx, "activity:1"); has {
		t.Fatal("Has after Forget")
	}
	if has, err := s.Has(ctx, "activity:never"); err != nil || has {
		t.Fatalf("Has of an unmarked key = %v, %v", has, err)
	}

	// Of concurrent Marks of one new key, exactly one wins.
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if ok, err := s.Mark(ctx, "activity:race", time.Hour); err == nil && ok {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d Marks won; want 1", wins.Load())
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
