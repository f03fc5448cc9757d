package redisstate_test

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/redisstate"
)

func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	store, err := redisstate.New(rdb, &redisstate.Config{KeyPrefix: "relay:directory:"})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	// Every state write is fenced by the lease token.
	lease, err := directory.AcquireLease(ctx, store, "https://directory.example", nil)
	if err != nil {
		fmt.Println("busy:", err)
		return
	}
	defer lease.Release()
	rec, _ := lease.Load(lease.Context())
	fmt.Println(rec.State)
}
