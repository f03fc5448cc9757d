package redisschemes_test

import (
	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/sig/redisschemes"
)

// The scheme memory in Redis, shared by deliveries and fetches and kept
// across restarts; re-probing reads its dates.
func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	cfg := deliver.DefaultConfig()
	cfg.Schemes = redisschemes.New(rdb, &redisschemes.Config{KeyPrefix: "myapp:schemes:"})
	_ = cfg
}
