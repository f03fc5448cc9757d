package redisstate_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/directorytest"
	"github.com/fedkit/fedkit/directory/redisstate"
	"github.com/fedkit/fedkit/internal/redistest"
)

const origin = "https://directory.example"

func setup(t testing.TB) (*redisstate.Store, *redisClient, string) {
	t.Helper()
	c, prefix := redistest.Client(t)
	s, err := redisstate.New(c, &redisstate.Config{KeyPrefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return s, c, prefix
}

func TestConformance(t *testing.T) {
	directorytest.TestStateStore(t, func(t testing.TB) directory.StateStore {
		s, _, _ := setup(t)
		return s
	})
}

func TestKeysHashOriginAndRetention(t *testing.T) {
	s, c, prefix := setup(t)
	ctx := context.Background()
	tok, err := s.Acquire(ctx, origin, directory.LeaseTTLDefault)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, origin, tok, directory.StateRecord{State: directory.StateConfigured}); err != nil {
		t.Fatal(err)
	}
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(origin))
	digest := hex.EncodeToString(sum[:])
	if len(keys) != 2 {
		t.Fatalf("keys = %q, want one lease and one state", keys)
	}
	for _, k := range keys {
		if strings.Contains(k, "directory.example") {
			t.Errorf("key %q holds the raw origin", k)
		}
		if !strings.Contains(k, digest) {
			t.Errorf("key %q lacks the origin digest", k)
		}
		ttl, err := c.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		want := directory.StateRetentionDefault
		if strings.HasSuffix(k, ":lease") {
			want = directory.LeaseTTLDefault
		}
		if ttl <= want-time.Minute/2 || ttl > want {
			t.Errorf("%s PTTL = %v, want about %v", k, ttl, want)
		}
	}
	// Every write refreshes retention.
	_, sk := keys[0], keys[1]
	if strings.HasSuffix(sk, ":lease") {
		sk = keys[0]
	}
	if err := c.PExpire(ctx, sk, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, origin, tok, directory.StateRecord{State: directory.StateRetrying, Attempts: 1}); err != nil {
		t.Fatal(err)
	}
	if ttl, _ := c.PTTL(ctx, sk).Result(); ttl < directory.StateRetentionDefault-time.Minute {
		t.Fatalf("retention not refreshed: %v", ttl)
	}
}

func TestLoadRejectsTamperedRecord(t *testing.T) {
	s, c, prefix := setup(t)
	ctx := context.Background()
	tok, _ := s.Acquire(ctx, origin, time.Minute)
	if err := s.Save(ctx, origin, tok, directory.StateRecord{State: directory.StateRegistered, Registered: true}); err != nil {
		t.Fatal(err)
	}
	keys, _ := c.Keys(ctx, prefix+"*:state").Result()
	if len(keys) != 1 {
		t.Fatalf("state keys = %q", keys)
	}
	for _, tc := range []struct{ name, field, value string }{
		{"UnknownState", "st", "hacked"},
		{"AttemptsOverBound", "n", "65"},
		{"NegativeTime", "hb", "-5"},
		{"NonNumericProtocol", "pv", "three"},
		{"ProtocolTooHigh", "pv", "4"},
		{"ExtraField", "body", "{}"},
		{"RegisteredNotBool", "reg", "yes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.Save(ctx, origin, tok, directory.StateRecord{State: directory.StateRegistered, Registered: true}); err != nil {
				t.Fatal(err)
			}
			if err := c.HSet(ctx, keys[0], tc.field, tc.value).Err(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Load(ctx, origin); !errors.Is(err, directory.ErrInvalidRecord) {
				t.Fatalf("Load err = %v, want ErrInvalidRecord", err)
			}
		})
	}
}

func TestRedisDownIsErrRedis(t *testing.T) {
	c := newClosedClient()
	defer c.Close()
	s, err := redisstate.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Load(ctx, origin); !errors.Is(err, redisstate.ErrRedis) {
		t.Fatalf("Load err = %v, want ErrRedis", err)
	}
	if _, err := s.Acquire(ctx, origin, time.Minute); !errors.Is(err, redisstate.ErrRedis) {
		t.Fatalf("Acquire err = %v, want ErrRedis", err)
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := redisstate.New(nil, nil); err == nil {
		t.Fatal("nil client accepted")
	}
	c := newClosedClient()
	defer c.Close()
	if _, err := redisstate.New(c, &redisstate.Config{Retention: time.Millisecond}); err == nil {
		t.Fatal("sub-second retention accepted")
	}
}

func TestRenewRefusesZeroTTL(t *testing.T) {
	s, _, _ := setup(t)
	ctx := context.Background()
	tok, err := s.Acquire(ctx, origin, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Renew(ctx, origin, tok, 0); err == nil {
		t.Fatal("zero TTL renew accepted")
	}
	if _, err := s.Acquire(ctx, origin, time.Minute); !errors.Is(err, directory.ErrLeaseHeld) {
		t.Fatalf("lease gone after a refused renew: %v", err)
	}
}
