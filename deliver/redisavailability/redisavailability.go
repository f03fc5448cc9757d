// Package redisavailability is a driver.AvailabilityStore in Redis,
// shared by every process using the same Redis and KeyPrefix.
//
//	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"}) // the caller's
//	cfg := deliver.DefaultConfig()
//	cfg.Availability.Store = redisavailability.New(rdb, nil)
//
// A failing host is one hash at KeyPrefix+"{availability}:h:"+host with a field "d:N" per
// failure day N (UTC days since 1970 of the caller's clock, the latest
// rule.Days kept) and, once unavailable, "since" (Unix milliseconds of the
// caller's clock); unavailable hosts are also members of the sorted set
// KeyPrefix+"{availability}:unavailable", scored by since, for
// ListUnavailable. The hash tag puts every key on one Redis Cluster slot,
// since one script writes a host's hash and the set together. The
// server's clock only times retention: a failing host's hash expires
// FailingTTL after its last failure, an unavailable one UnavailableTTL
// after it became so (it is then tried again), so memory stays bounded.
package redisavailability

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/deliver/driver"
)

// Defaults.
const (
	// KeyPrefixDefault begins every key.
	KeyPrefixDefault = "fedkit:availability:"
	// FailingTTLDefault is how long a failing host's days are kept after
	// its last failure.
	FailingTTLDefault = 30 * 24 * time.Hour
	// UnavailableTTLDefault is how long an unavailable host stays so
	// without being seen alive: long enough for an operator's 30-day
	// removal list, after which it is tried again.
	UnavailableTTLDefault = 180 * 24 * time.Hour
)

// Config configures a Store. The zero value is usable.
type Config struct {
	// KeyPrefix begins every key. Defaults to KeyPrefixDefault.
	KeyPrefix string
	// FailingTTL defaults to FailingTTLDefault.
	FailingTTL time.Duration
	// UnavailableTTL defaults to UnavailableTTLDefault.
	UnavailableTTL time.Duration
}

// ErrRedis wraps every error from Redis.
var ErrRedis = errors.New("redisavailability: redis failed")

var _ driver.AvailabilityStore = (*Store)(nil)

// Store is a driver.AvailabilityStore in Redis, safe for concurrent use.
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
	if x.FailingTTL <= 0 {
		x.FailingTTL = FailingTTLDefault
	}
	if x.UnavailableTTL <= 0 {
		x.UnavailableTTL = UnavailableTTLDefault
	}
	return &Store{c: c, cfg: x}
}

// Every key carries one hash tag, so the failure script, which writes a
// host's key and the index together, stays on one Redis Cluster slot (the
// data is small and bounded: one hash per failing host and one index).
const slotTag = "{availability}"

func (s *Store) hostKey(host string) string { return s.cfg.KeyPrefix + slotTag + ":h:" + host }
func (s *Store) indexKey() string           { return s.cfg.KeyPrefix + slotTag + ":unavailable" }

// wrap maps driver errors to the package's.
func wrap(err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrRedis, err)
}

// failure records a failure day and returns since (ms) or false, in one
// step, so concurrent processes count each day once.
var failure = redis.NewScript(`
local since = redis.call('HGET', KEYS[1], 'since')
if since then return since end
redis.call('HSET', KEYS[1], 'd:' .. ARGV[1], 1)
local ds = {}
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(f, 1, 2) == 'd:' then table.insert(ds, tonumber(string.sub(f, 3))) end
end
table.sort(ds)
local n = tonumber(ARGV[3])
while #ds > n do
  redis.call('HDEL', KEYS[1], 'd:' .. ds[1])
  table.remove(ds, 1)
end
if #ds >= n then
  redis.call('HSET', KEYS[1], 'since', ARGV[2])
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
  return ARGV[2]
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return false`)

// Failure implements driver.AvailabilityStore.
func (s *Store) Failure(ctx context.Context, host string, now time.Time, rule driver.AvailabilityRule) (time.Time, bool, error) {
	days := max(rule.Days, 1)
	res, err := failure.Run(ctx, s.c, []string{s.hostKey(host), s.indexKey()},
		now.Unix()/86400, now.UnixMilli(), days, host, s.cfg.FailingTTL.Milliseconds(), s.cfg.UnavailableTTL.Milliseconds()).Result()
	if err := wrap(err); err != nil {
		return time.Time{}, false, err
	}
	str, ok := res.(string)
	if !ok {
		return time.Time{}, false, nil
	}
	return parseMillis(str)
}

func parseMillis(str string) (time.Time, bool, error) {
	ms, err := strconv.ParseInt(str, 10, 64)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("%w: since %q", ErrRedis, str)
	}
	return time.UnixMilli(ms).UTC(), true, nil
}

// SeenAlive implements driver.AvailabilityStore: one round trip.
func (s *Store) SeenAlive(ctx context.Context, host string) error {
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, s.hostKey(host))
		p.ZRem(ctx, s.indexKey(), host)
		return nil
	})
	return wrap(err)
}

// Unavailable implements driver.AvailabilityStore: one HGET.
func (s *Store) Unavailable(ctx context.Context, host string) (time.Time, bool, error) {
	str, err := s.c.HGet(ctx, s.hostKey(host), "since").Result()
	if errors.Is(err, redis.Nil) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, wrap(err)
	}
	return parseMillis(str)
}

// ListUnavailable implements driver.AvailabilityStore. Members whose
// hash has expired are dropped from the index as they are found.
func (s *Store) ListUnavailable(ctx context.Context) ([]driver.UnavailableHost, error) {
	zs, err := s.c.ZRangeWithScores(ctx, s.indexKey(), 0, -1).Result()
	if err != nil {
		return nil, wrap(err)
	}
	out := make([]driver.UnavailableHost, 0, len(zs))
	for _, z := range zs {
		host, _ := z.Member.(string)
		since, down, err := s.Unavailable(ctx, host)
		if err != nil {
			return nil, err
		}
		if !down {
			s.c.ZRem(ctx, s.indexKey(), host)
			continue
		}
		out = append(out, driver.UnavailableHost{Host: host, Since: since})
	}
	return out, nil
}
