package redistest_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/internal/redistest"
)

func TestClientPrefixIsCleaned(t *testing.T) {
	ctx := context.Background()
	var prefix string
	var other string
	t.Run("inner", func(t *testing.T) {
		c, p := redistest.Client(t)
		prefix = p
		for _, k := range []string{"a", "b", "c:d"} {
			if err := c.Set(ctx, p+k, "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		_, other = redistest.Client(t)
		if other == prefix {
			t.Fatal("two tests share a prefix")
		}
	})
	c := redis.NewClient(redistest.Options(t))
	defer c.Close()
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 0 {
		t.Fatalf("keys survived cleanup: %v", keys)
	}
}
