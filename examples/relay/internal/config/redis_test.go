package config

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

// A REDIS_URL naming more nodes with addr parameters is a Redis Cluster;
// one without is a single node; both are checked as they will be used.
func TestRedisClient(t *testing.T) {
	for _, tc := range []struct {
		url     string
		cluster bool
		addrs   int
	}{
		{"redis://127.0.0.1:6379/0", false, 1},
		{"rediss://user:secret@redis.example:6380/2", false, 1},
		{"redis://10.0.0.1:6379?addr=10.0.0.2:6379&addr=10.0.0.3:6379", true, 3},
	} {
		if err := checkRedisURL(tc.url); err != nil {
			t.Fatalf("checkRedisURL(%q): %v", tc.url, err)
		}
		c, err := RedisClient(tc.url)
		if err != nil {
			t.Fatalf("RedisClient(%q): %v", tc.url, err)
		}
		cc, isCluster := c.(*redis.ClusterClient)
		if isCluster != tc.cluster || (isCluster && len(cc.Options().Addrs) != tc.addrs) {
			t.Errorf("RedisClient(%q) = %T, want cluster %v with %d nodes", tc.url, c, tc.cluster, tc.addrs)
		}
		c.Close()
	}
	for _, bad := range []string{"http://127.0.0.1:6379", "redis://127.0.0.1:6379?addr=x&dial_timeout=soon", "redis://127.0.0.1:6379?bogus=1"} {
		if err := checkRedisURL(bad); err == nil {
			t.Errorf("checkRedisURL(%q) accepted it", bad)
		}
	}
}
