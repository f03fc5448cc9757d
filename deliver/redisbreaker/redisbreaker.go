package redisbreaker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/deliver/driver"
)

// Defaults for Config.
const (
	// KeyPrefixDefault begins every key, so fedkit's lights never share a
	// key with a Mastodon's Stoplights on the same Redis.
	KeyPrefixDefault = "fedkit:"
	// TTLDefault is how long a light's key lives after its last change,
	// as the stoplight gem keeps its metadata for seven days.
	TTLDefault = 7 * 24 * time.Hour
)

// keySpace is the stoplight gem's (version 5) key for a light's metadata,
// followed by the light's name.
const keySpace = "stoplight:v5:metadata:"

// Config configures a Store. The zero value is usable.
type Config struct {
	// KeyPrefix begins every key, before the stoplight layout. Defaults to
	// KeyPrefixDefault.
	KeyPrefix string
	// TTL is how long an untouched light is kept; a light is never expired
	// while it is open. Defaults to TTLDefault.
	TTL time.Duration
}

// ErrRedis wraps every error from Redis, so a caller can tell the store
// failing from a decision.
var ErrRedis = errors.New("redisbreaker: redis failed")

// Store is a driver.BreakerStore in Redis, shared by every process using
// the same Redis and KeyPrefix. Each light is one hash, at
// KeyPrefix + "stoplight:v5:metadata:" + light, the key under which the
// stoplight gem's Redis data store keeps a light's state; the fields are
// named as the gem names them (consecutive_failures, last_failure_at,
// recovery_scheduled_after, recovery_started_at), with times in Unix
// milliseconds. Admit and Record each run as one Lua script, so the
// threshold and the one-probe rule hold across processes.
type Store struct {
	c   redis.UniversalClient
	cfg Config
}

var _ driver.BreakerStore = (*Store)(nil)

// New returns a Store using c, which the caller owns and closes. It does
// not connect. A nil cfg means defaults.
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

// Key returns the Redis key holding light's state.
func (s *Store) Key(light string) string { return s.cfg.KeyPrefix + keySpace + light }

// The scripts take the caller's now, never the server's TIME, so every
// process judges by the clock the deliverer was given.
//
// State: no key, or no recovery_scheduled_after, is closed (green);
// recovery_scheduled_after set is open (red) until then; after it, a
// recovery_started_at within the cool-off is a probe in flight (yellow).
var admitScript = redis.NewScript(`
local now = tonumber(ARGV[1])
local cool = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local m = redis.call('HMGET', KEYS[1], 'recovery_scheduled_after', 'recovery_started_at')
local open_until = tonumber(m[1])
if not open_until then
  return {1, 0, 0}
end
if now < open_until then
  return {0, 0, open_until}
end
local started = tonumber(m[2])
if started and now < started + cool then
  return {0, 0, started + cool}
end
redis.call('HSET', KEYS[1], 'recovery_started_at', now)
redis.call('PEXPIRE', KEYS[1], math.max(ttl, 2 * cool))
return {1, 1, 0}
`)

var recordScript = redis.NewScript(`
local now = tonumber(ARGV[1])
local probe = ARGV[2] == '1'
local ok = ARGV[3] == '1'
local threshold = tonumber(ARGV[4])
local cool = tonumber(ARGV[5])
local ttl = math.max(tonumber(ARGV[6]), 2 * cool)
local open = redis.call('HEXISTS', KEYS[1], 'recovery_scheduled_after') == 1
if probe ~= open then
  -- A non-probe outcome while open, or a probe's after another closed it.
  return 0
end
if ok then
  redis.call('DEL', KEYS[1])
  return 1
end
if probe then
  redis.call('HSET', KEYS[1], 'recovery_scheduled_after', now + cool, 'last_failure_at', now)
  redis.call('HDEL', KEYS[1], 'recovery_started_at')
  redis.call('PEXPIRE', KEYS[1], ttl)
  return 2
end
local n = redis.call('HINCRBY', KEYS[1], 'consecutive_failures', 1)
redis.call('HSET', KEYS[1], 'last_failure_at', now)
if n >= threshold then
  redis.call('HSET', KEYS[1], 'recovery_scheduled_after', now + cool, 'consecutive_failures', 0)
end
redis.call('PEXPIRE', KEYS[1], ttl)
return 2
`)

// Admit implements driver.BreakerStore.
func (s *Store) Admit(ctx context.Context, light string, now time.Time, rule driver.BreakerRule) (driver.Admission, error) {
	res, err := admitScript.Run(ctx, s.c, []string{s.Key(light)},
		now.UnixMilli(), rule.CoolOff.Milliseconds(), s.cfg.TTL.Milliseconds()).Int64Slice()
	if err != nil {
		return driver.Admission{}, mapError("admit", err)
	}
	if len(res) != 3 {
		return driver.Admission{}, fmt.Errorf("%w: admit: unexpected reply %v", ErrRedis, res)
	}
	a := driver.Admission{Allow: res[0] == 1, Probe: res[1] == 1}
	if !a.Allow {
		a.Until = time.UnixMilli(res[2]).In(now.Location())
	}
	return a, nil
}

// Record implements driver.BreakerStore.
func (s *Store) Record(ctx context.Context, light string, probe, ok bool, now time.Time, rule driver.BreakerRule) error {
	err := recordScript.Run(ctx, s.c, []string{s.Key(light)},
		now.UnixMilli(), flag(probe), flag(ok), rule.Threshold, rule.CoolOff.Milliseconds(),
		s.cfg.TTL.Milliseconds()).Err()
	return mapError("record", err)
}

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

// mapError is the one place Redis errors become this package's: each is
// wrapped in ErrRedis, keeping the client's error; context errors pass
// through as they are.
func mapError(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %s: %w", ErrRedis, op, err)
}
