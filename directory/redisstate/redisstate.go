package redisstate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/directory"
)

// KeyPrefixDefault is the key prefix when Config.KeyPrefix is empty.
const KeyPrefixDefault = "fedkit:directory:"

// ErrRedis wraps every Redis failure that is not a lease or record verdict,
// so callers can tell "the store is down" from "you lost the lease".
var ErrRedis = errors.New("redisstate: redis")

// Config configures a Store. The zero value is usable.
type Config struct {
	// KeyPrefix starts every key, so tests and tenants stay apart.
	// Defaults to KeyPrefixDefault.
	KeyPrefix string
	// Retention is how long a record survives its last write. Defaults to
	// directory.StateRetentionDefault (90 days).
	Retention time.Duration
}

// Store is a directory.StateStore on Redis. It is safe for concurrent use
// by any number of processes sharing the server.
type Store struct {
	rdb       redis.UniversalClient
	prefix    string
	retention time.Duration
}

var _ directory.StateStore = (*Store)(nil)

// New returns a Store using rdb, which the caller owns and closes. It sends
// no command.
func New(rdb redis.UniversalClient, cfg *Config) (*Store, error) {
	if rdb == nil {
		return nil, errors.New("redisstate: nil client")
	}
	var c Config
	if cfg != nil {
		c = *cfg
	}
	if c.KeyPrefix == "" {
		c.KeyPrefix = KeyPrefixDefault
	}
	if c.Retention == 0 {
		c.Retention = directory.StateRetentionDefault
	}
	if c.Retention < time.Second {
		return nil, errors.New("redisstate: retention under one second")
	}
	return &Store{rdb: rdb, prefix: c.KeyPrefix, retention: c.Retention}, nil
}

// keys returns the lease and state keys of origin. They carry the SHA-256 of
// the origin, never the origin, and share a hash tag so the Lua scripts stay
// on one Redis Cluster slot.
func (s *Store) keys(origin string) (lease, state string) {
	sum := sha256.Sum256([]byte(origin))
	tag := "{" + hex.EncodeToString(sum[:]) + "}"
	return s.prefix + tag + ":lease", s.prefix + tag + ":state"
}

// Lease scripts compare the token first, so only the holder can extend,
// drop or write under it.
var (
	renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)
	releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)
	// saveScript replaces the whole hash, so no stale field survives a
	// write, and refreshes retention in the same atomic step.
	saveScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], unpack(ARGV, 3))
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1`)
)

// Load implements directory.StateStore.
func (s *Store) Load(ctx context.Context, origin string) (directory.StateRecord, error) {
	_, sk := s.keys(origin)
	m, err := s.rdb.HGetAll(ctx, sk).Result()
	if err != nil {
		return directory.StateRecord{}, mapErr(err)
	}
	if len(m) == 0 {
		return directory.StateRecord{}, nil
	}
	return decode(m)
}

// Acquire implements directory.StateStore.
func (s *Store) Acquire(ctx context.Context, origin string, ttl time.Duration) (string, error) {
	if ttl < time.Millisecond {
		return "", errors.New("redisstate: lease ttl under one millisecond")
	}
	lk, _ := s.keys(origin)
	tok := directory.NewLeaseToken()
	ok, err := s.rdb.SetNX(ctx, lk, tok, ttl).Result()
	if err != nil {
		return "", mapErr(err)
	}
	if !ok {
		return "", directory.ErrLeaseHeld
	}
	return tok, nil
}

// Renew implements directory.StateStore.
func (s *Store) Renew(ctx context.Context, origin, token string, ttl time.Duration) error {
	if ttl < time.Millisecond {
		// PEXPIRE 0 would delete the lease rather than extend it.
		return errors.New("redisstate: lease ttl under one millisecond")
	}
	lk, _ := s.keys(origin)
	n, err := renewScript.Run(ctx, s.rdb, []string{lk}, token, ttl.Milliseconds()).Int()
	if err != nil {
		return mapErr(err)
	}
	if n != 1 {
		return directory.ErrLeaseLost
	}
	return nil
}

// Release implements directory.StateStore.
func (s *Store) Release(ctx context.Context, origin, token string) error {
	lk, _ := s.keys(origin)
	n, err := releaseScript.Run(ctx, s.rdb, []string{lk}, token).Int()
	if err != nil {
		return mapErr(err)
	}
	if n != 1 {
		return directory.ErrLeaseLost
	}
	return nil
}

// Save implements directory.StateStore.
func (s *Store) Save(ctx context.Context, origin, token string, rec directory.StateRecord) error {
	rec = rec.Normalize()
	if err := rec.Validate(); err != nil {
		return err
	}
	if token == "" {
		return directory.ErrLeaseLost
	}
	lk, sk := s.keys(origin)
	args := append([]any{token, s.retention.Milliseconds()}, encode(rec)...)
	n, err := saveScript.Run(ctx, s.rdb, []string{lk, sk}, args...).Int()
	if err != nil {
		return mapErr(err)
	}
	if n != 1 {
		return directory.ErrLeaseLost
	}
	return nil
}

// mapErr is the one place driver errors become this package's errors.
func mapErr(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrRedis, err)
}

// Hash fields. Short names keep the record small; each holds a closed value,
// a whole-second Unix time, a small integer or a hex digest.
const (
	fState      = "st"
	fRegistered = "reg"
	fProtocol   = "pv"
	fDigest     = "pd"
	fAttempt    = "at"
	fSuccess    = "ok"
	fHeartbeat  = "hb"
	fRetry      = "rt"
	fAttempts   = "n"
	fOperation  = "op"
	fOutcome    = "oc"
	fCode       = "ec"
	fDiag       = "dg"
)

func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func encode(r directory.StateRecord) []any {
	reg := "0"
	if r.Registered {
		reg = "1"
	}
	return []any{
		fState, string(r.State),
		fRegistered, reg,
		fProtocol, int(r.Protocol),
		fDigest, r.ProfileDigest,
		fAttempt, unix(r.LastAttempt),
		fSuccess, unix(r.LastSuccess),
		fHeartbeat, unix(r.NextHeartbeat),
		fRetry, unix(r.RetryAt),
		fAttempts, r.Attempts,
		fOperation, string(r.Operation),
		fOutcome, string(r.Outcome),
		fCode, string(r.Code),
		fDiag, string(r.Diagnostic),
	}
}

func decode(m map[string]string) (directory.StateRecord, error) {
	bad := func(f string) error { return fmt.Errorf("%w: field %s", directory.ErrInvalidRecord, f) }
	if len(m) > 13 {
		return directory.StateRecord{}, bad("count")
	}
	num := func(f string, lo, hi int64) (int64, error) {
		v, ok := m[f]
		if !ok {
			return 0, bad(f)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < lo || n > hi {
			return 0, bad(f)
		}
		return n, nil
	}
	tm := func(f string) (time.Time, error) {
		n, err := num(f, 0, 1<<40)
		if err != nil || n == 0 {
			return time.Time{}, err
		}
		return time.Unix(n, 0).UTC(), nil
	}
	var r directory.StateRecord
	var err error
	var n int64
	r.State = directory.State(m[fState])
	switch m[fRegistered] {
	case "0":
	case "1":
		r.Registered = true
	default:
		return r, bad(fRegistered)
	}
	if n, err = num(fProtocol, 0, int64(directory.MaxVersion)); err != nil {
		return r, err
	}
	r.Protocol = directory.Version(n)
	r.ProfileDigest = m[fDigest]
	if r.LastAttempt, err = tm(fAttempt); err != nil {
		return r, err
	}
	if r.LastSuccess, err = tm(fSuccess); err != nil {
		return r, err
	}
	if r.NextHeartbeat, err = tm(fHeartbeat); err != nil {
		return r, err
	}
	if r.RetryAt, err = tm(fRetry); err != nil {
		return r, err
	}
	if n, err = num(fAttempts, 0, directory.MaxAttempts); err != nil {
		return r, err
	}
	r.Attempts = int(n)
	r.Operation = directory.Operation(m[fOperation])
	r.Outcome = directory.Outcome(m[fOutcome])
	r.Code = directory.ErrorCode(m[fCode])
	r.Diagnostic = directory.Diagnostic(m[fDiag])
	if err := r.Validate(); err != nil {
		return directory.StateRecord{}, err
	}
	return r, nil
}
