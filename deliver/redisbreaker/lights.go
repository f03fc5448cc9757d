package redisbreaker

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/deliver/driver"
)

// Light returns one light's state as stored, read for display: a status
// page, an admin command. Deliveries never read it; Admit and Record
// decide in Redis. A light with nothing stored is green with no failures.
// The fields map to stoplight's: OpenUntil is recovery_scheduled_after,
// ProbeStarted recovery_started_at.
func (s *Store) Light(ctx context.Context, name string) (driver.BreakerLight, error) {
	h, err := s.c.HGetAll(ctx, s.Key(name)).Result()
	if err != nil {
		return driver.BreakerLight{}, mapError("light", err)
	}
	return parseLight(name, h), nil
}

// Lights returns every light with something stored (a failure counted, or
// open), sorted by name. A light is deleted when it closes, so this is the
// set of troubled destinations, not every one ever delivered to. It SCANs
// the key space under KeyPrefix (every master of a cluster, every shard of
// a ring), so it costs time in proportion to the keys in Redis: for a
// status page, not for each delivery.
func (s *Store) Lights(ctx context.Context) ([]driver.BreakerLight, error) {
	var mu sync.Mutex
	var out []driver.BreakerLight
	scan := func(ctx context.Context, c redis.UniversalClient) error {
		ls, err := s.scan(ctx, c)
		mu.Lock()
		out = append(out, ls...)
		mu.Unlock()
		return err
	}
	var err error
	switch c := s.c.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return scan(ctx, n) })
	case *redis.Ring:
		err = c.ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error { return scan(ctx, n) })
	default:
		err = scan(ctx, s.c)
	}
	if err != nil {
		return nil, mapError("lights", err)
	}
	slices.SortFunc(out, func(a, b driver.BreakerLight) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// scan reads the lights on one node, a page of keys at a time, each page's
// hashes in one pipelined round trip.
func (s *Store) scan(ctx context.Context, c redis.UniversalClient) ([]driver.BreakerLight, error) {
	base := s.cfg.KeyPrefix + keySpace
	match := globEscape(base) + "*"
	var out []driver.BreakerLight
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, match, 500).Result()
		if err != nil {
			return out, err
		}
		if len(keys) > 0 {
			cmds := make([]*redis.MapStringStringCmd, len(keys))
			_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
				for i, k := range keys {
					cmds[i] = p.HGetAll(ctx, k)
				}
				return nil
			})
			if err != nil {
				return out, err
			}
			for i, k := range keys {
				// A key that expired since the SCAN reads as empty.
				if h := cmds[i].Val(); len(h) > 0 {
					out = append(out, parseLight(strings.TrimPrefix(k, base), h))
				}
			}
		}
		if cursor = next; cursor == 0 {
			return out, nil
		}
	}
}

// parseLight reads a light's hash as the scripts write it. Any client of
// the server can write there too: a field that is not what the scripts
// write (a positive count or millisecond time) reads as absent.
func parseLight(name string, h map[string]string) driver.BreakerLight {
	ms := func(field string) time.Time {
		n, err := strconv.ParseInt(h[field], 10, 64)
		if err != nil || n <= 0 {
			return time.Time{}
		}
		return time.UnixMilli(n)
	}
	failures, err := strconv.Atoi(h["consecutive_failures"])
	if err != nil || failures < 0 {
		failures = 0
	}
	return driver.BreakerLight{Name: name, Failures: failures, LastFailure: ms("last_failure_at"),
		OpenUntil: ms("recovery_scheduled_after"), ProbeStarted: ms("recovery_started_at")}
}

// globEscape quotes the characters SCAN's MATCH pattern treats specially,
// so a key prefix containing them matches only itself. It works on bytes,
// as Redis matches: every special is ASCII, and a prefix that is not UTF-8
// must come through unchanged.
func globEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[]\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
