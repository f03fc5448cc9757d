// Package redisschemes is a sig.LearnedSchemeStore in Redis: the scheme
// each host accepted and when, shared by every process using the same
// Redis and KeyPrefix and kept across restarts.
//
//	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"}) // the caller's
//	cfg := deliver.DefaultConfig()
//	cfg.Schemes = redisschemes.New(rdb, nil)
//
// Each host is one hash at KeyPrefix+host, with fields s (the scheme's
// text) and t (when it was learned, Unix milliseconds of the caller's
// clock), expiring TTL after its last write, so the memory stays bounded
// by the hosts delivered to in that span.
package redisschemes

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/sig"
)

// Defaults.
const (
	// KeyPrefixDefault begins every key.
	KeyPrefixDefault = "fedkit:schemes:"
	// TTLDefault is how long an untouched host is kept: longer than
	// deliver's re-probe period, so a re-probe finds what it re-probes.
	TTLDefault = 90 * 24 * time.Hour
)

// Config configures a Store. The zero value is usable.
type Config struct {
	// KeyPrefix begins every key. Defaults to KeyPrefixDefault.
	KeyPrefix string
	// TTL is how long a host not written is kept. Defaults to TTLDefault.
	TTL time.Duration
}

// ErrRedis wraps every error from Redis.
var ErrRedis = errors.New("redisschemes: redis failed")

// ErrCorrupt is returned when a stored value cannot be read back.
var ErrCorrupt = errors.New("redisschemes: stored value unreadable")

var _ sig.LearnedSchemeStore = (*Store)(nil)

// Store is a sig.LearnedSchemeStore in Redis. It is safe for concurrent
// use.
type Store struct {
	c   redis.UniversalClient
	cfg Config
}

// New returns a Store over c, which the caller owns. It does not dial.
func New(c redis.UniversalClient, cfg *Config) *Store {
	var x Config
	if cfg != nil {
		x = *cfg
	}
	if x.KeyPrefix == "" {
		x.KeyPrefix = KeyPrefixDefault
	}
	if x.TTL <= 0 {
		x.TTL = TTLDefault
	}
	return &Store{c: c, cfg: x}
}

// Key returns the Redis key holding host.
func (s *Store) Key(host string) string { return s.cfg.KeyPrefix + host }

func wrap(err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrRedis, err)
}

// Scheme implements sig.SchemeStore.
func (s *Store) Scheme(ctx context.Context, host string) (sig.Scheme, bool, error) {
	l, ok, err := s.Learned(ctx, host)
	return l.Scheme, ok, err
}

// setScheme writes the scheme, dropping the time learned when the scheme
// changes, in one step.
var setScheme = redis.NewScript(`
if redis.call('HGET', KEYS[1], 's') ~= ARGV[1] then redis.call('HDEL', KEYS[1], 't') end
redis.call('HSET', KEYS[1], 's', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`)

// SetScheme implements sig.SchemeStore: the time learned is kept when sc
// is the scheme remembered.
func (s *Store) SetScheme(ctx context.Context, host string, sc sig.Scheme) error {
	text, err := sc.MarshalText()
	if err != nil {
		return err
	}
	return wrap(setScheme.Run(ctx, s.c, []string{s.Key(host)}, string(text), s.cfg.TTL.Milliseconds()).Err())
}

// Learned implements sig.LearnedSchemeStore.
func (s *Store) Learned(ctx context.Context, host string) (sig.LearnedScheme, bool, error) {
	vals, err := s.c.HMGet(ctx, s.Key(host), "s", "t").Result()
	if err := wrap(err); err != nil {
		return sig.LearnedScheme{}, false, err
	}
	text, _ := vals[0].(string)
	if text == "" {
		return sig.LearnedScheme{}, false, nil
	}
	var l sig.LearnedScheme
	if err := l.Scheme.UnmarshalText([]byte(text)); err != nil {
		return sig.LearnedScheme{}, false, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if t, _ := vals[1].(string); t != "" {
		ms, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return sig.LearnedScheme{}, false, fmt.Errorf("%w: time %q", ErrCorrupt, t)
		}
		l.Learned = time.UnixMilli(ms).UTC()
	}
	return l, true, nil
}

// Learn implements sig.LearnedSchemeStore.
func (s *Store) Learn(ctx context.Context, host string, l sig.LearnedScheme) error {
	text, err := l.Scheme.MarshalText()
	if err != nil {
		return err
	}
	key := s.Key(host)
	_, err = s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if l.Learned.IsZero() {
			p.HDel(ctx, key, "t")
			p.HSet(ctx, key, "s", string(text))
		} else {
			p.HSet(ctx, key, "s", string(text), "t", strconv.FormatInt(l.Learned.UnixMilli(), 10))
		}
		p.PExpire(ctx, key, s.cfg.TTL)
		return nil
	})
	return wrap(err)
}
