package redisbreaker_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
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

// A status page listing the destinations whose breakers are counting
// failures or open, as every process sees them.
func ExampleStore_Lights() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	s := redisbreaker.New(rdb, &redisbreaker.Config{KeyPrefix: "myapp:"})
	lights, err := s.Lights(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	now := time.Now()
	for _, l := range lights {
		fmt.Printf("%s %s failures=%d until=%v\n", l.Name, l.Color(now), l.Failures, l.OpenUntil)
	}
}

// One destination's breaker, for an admin command.
func ExampleStore_Light() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	s := redisbreaker.New(rdb, &redisbreaker.Config{KeyPrefix: "myapp:"})
	l, err := s.Light(context.Background(), "https://mastodon.example/inbox")
	if err != nil {
		log.Fatal(err)
	}
	if l.Color(time.Now()) != driver.LightGreen {
		fmt.Println("held until", l.OpenUntil)
	}
}

// A worker of your own asks the shared breaker before each delivery and
// reports the outcome; a Deliverer does this for you.
func ExampleStore_Admit() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	s := redisbreaker.New(rdb, nil)
	ctx := context.Background()
	rule := driver.BreakerRule{Threshold: 10, CoolOff: time.Minute}
	adm, err := s.Admit(ctx, "b.example", time.Now(), rule)
	if err != nil {
		log.Fatal(err)
	}
	if !adm.Allow {
		fmt.Println("held until", adm.Until)
		return
	}
	ok := true // ... deliver, and see whether the host answered ...
	if err := s.Record(ctx, "b.example", adm.Probe, ok, time.Now(), rule); err != nil {
		log.Fatal(err)
	}
}
