package redisbreaker_test

import (
	"fmt"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/redisbreaker"
)

// Breakers shared by every process, one light per inbox URL as Mastodon
// keeps them.
func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	cfg := deliver.DefaultConfig()
	cfg.Breaker.Store = redisbreaker.New(rdb, &redisbreaker.Config{KeyPrefix: "myapp:"})
	cfg.Breaker.PerInbox = true
	c, err := client.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	d, err := deliver.New(&deliver.MemoryQueue{}, staticKeys{}, c, cfg)
	if err != nil {
		log.Fatal(err)
	}
	_ = d
}

// Each light is one hash where the stoplight gem keeps a light's metadata.
func ExampleStore_Key() {
	rdb := redis.NewClient(&redis.Options{})
	defer rdb.Close()
	s := redisbreaker.New(rdb, &redisbreaker.Config{KeyPrefix: "myapp:"})
	fmt.Println(s.Key("https://mastodon.example/inbox"))
	// Output: myapp:stoplight:v5:metadata:https://mastodon.example/inbox
}
