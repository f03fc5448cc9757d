package redisseen_test

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/examples/relay/internal/redisseen"
)

// Each relay process makes its own Store on the deployment's Redis; all of
// them share the marks. (Needs a Redis, so it has no output to check.)
func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	seen := redisseen.New(rdb, &redisseen.Config{KeyPrefix: "fedkit-relay:seen:"})
	first, err := seen.Mark(context.Background(), "activity:0123", 6*time.Hour)
	fmt.Println(first, err)
}
