package redisseen

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// KeyPrefixDefault begins every key.
const KeyPrefixDefault = "fedkit-relay:seen:"

// ErrRedis wraps every Redis failure.
var ErrRedis = errors.New("redisseen: redis")

// Config configures a Store.
type Config struct {
	// KeyPrefix begins every key, so relays can share one Redis. Defaults
	// to KeyPrefixDefault.
	KeyPrefix string
}

// Store is a relay.SeenSet on Redis.
type Store struct {
	rdb    redis.UniversalClient
	prefix string
}

// New returns a Store on rdb, which the caller owns; it does not connect.
func New(rdb redis.UniversalClient, cfg *Config) *Store {
	s := &Store{rdb: rdb, prefix: KeyPrefixDefault}
	if cfg != nil && cfg.KeyPrefix != "" {
		s.prefix = cfg.KeyPrefix
	}
	return s
}

// Mark records key for window (at least a millisecond) and reports whether
// it was new. Redis's own clock measures the window.
func (s *Store) Mark(ctx context.Context, key string, window time.Duration) (bool, error) {
	window = max(window, time.Millisecond)
	ok, err := s.rdb.SetNX(ctx, s.prefix+key, 1, window).Result()
	return ok, wrap(err)
}

// Has reports whether key is marked.
func (s *Store) Has(ctx context.Context, key string) (bool, error) {
	n, err := s.rdb.Exists(ctx, s.prefix+key).Result()
	return n > 0, wrap(err)
}

// Forget removes key.
func (s *Store) Forget(ctx context.Context, key string) error {
	return wrap(s.rdb.Del(ctx, s.prefix+key).Err())
}

func wrap(err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrRedis, err)
}
