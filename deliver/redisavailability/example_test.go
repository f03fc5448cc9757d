package redisavailability_test

import (
	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/redisavailability"
)

// Host availability in Redis, shared by every process delivering.
func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	cfg := deliver.DefaultConfig()
	cfg.Availability.Store = redisavailability.New(rdb, nil)
	_ = cfg
}
