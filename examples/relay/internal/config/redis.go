package config

import (
	"net/url"

	"github.com/redis/go-redis/v9"
)

// RedisClient connects to REDIS_URL: one node (redis://host:6379/0,
// rediss:// for TLS), or a Redis Cluster when the URL names more of its
// nodes with addr parameters (redis://node1:6379?addr=node2:6379&addr=node3:6379,
// go-redis's cluster URL), which gives a cluster client. It does not dial.
// Every key the relay writes keeps a multi-key operation in one hash slot,
// so the two work alike.
func RedisClient(raw string) (redis.UniversalClient, error) {
	if redisCluster(raw) {
		opt, err := redis.ParseClusterURL(raw)
		if err != nil {
			return nil, err
		}
		return redis.NewClusterClient(opt), nil
	}
	opt, err := redis.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	return redis.NewClient(opt), nil
}

// redisCluster reports whether a REDIS_URL names further nodes.
func redisCluster(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Query().Has("addr")
}

// checkRedisURL parses a REDIS_URL as RedisClient would.
func checkRedisURL(raw string) error {
	var err error
	if redisCluster(raw) {
		_, err = redis.ParseClusterURL(raw)
	} else {
		_, err = redis.ParseURL(raw)
	}
	return err
}
