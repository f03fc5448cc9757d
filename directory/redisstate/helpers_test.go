package redisstate_test

import "github.com/redis/go-redis/v9"

type redisClient = redis.Client

// newClosedClient points at a port nothing listens on, with no retries, so
// every command fails fast.
func newClosedClient() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200e6})
}
