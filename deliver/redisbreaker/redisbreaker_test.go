package redisbreaker_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/driver/drivertest"
	"github.com/fedkit/fedkit/deliver/redisbreaker"
	"github.com/fedkit/fedkit/internal/redistest"
)

func TestBreakerStore(t *testing.T) {
	drivertest.TestBreakerStore(t, func(t testing.TB) driver.BreakerStore {
		c, prefix := redistest.Client(t)
		return redisbreaker.New(c, &redisbreaker.Config{KeyPrefix: prefix})
	})
}

var rule = driver.BreakerRule{Threshold: 3, CoolOff: time.Minute}

func open(t *testing.T, s *redisbreaker.Store, light string, now time.Time) {
	t.Helper()
	ctx := context.Background()
	for range rule.Threshold {
		if _, err := s.Admit(ctx, light, now, rule); err != nil {
			t.Fatal(err)
		}
		if err := s.Record(ctx, light, false, false, now, rule); err != nil {
			t.Fatal(err)
		}
	}
}

// The light lives where the stoplight gem keeps a light's metadata, named
// by the inbox URL as Mastodon names its lights, under the caller's prefix.
func TestKeyLayout(t *testing.T) {
	c, prefix := redistest.Client(t)
	s := redisbreaker.New(c, &redisbreaker.Config{KeyPrefix: prefix})
	ctx := context.Background()
	light := "https://b.example/users/bob/inbox"
	now := time.UnixMilli(1_700_000_000_000)
	open(t, s, light, now)

	key := prefix + "stoplight:v5:metadata:" + light
	if s.Key(light) != key {
		t.Fatalf("Key = %q, want %q", s.Key(light), key)
	}
	h, err := c.HGetAll(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	if h["recovery_scheduled_after"] != "1700000060000" || h["last_failure_at"] != "1700000000000" {
		t.Fatalf("hash %v: want recovery_scheduled_after and last_failure_at in Unix ms", h)
	}
	ttl, err := c.PTTL(ctx, key).Result()
	if err != nil || ttl <= 0 || ttl > redisbreaker.TTLDefault {
		t.Fatalf("PTTL = %v, %v; want a TTL up to %v", ttl, err, redisbreaker.TTLDefault)
	}
	// A success while closed leaves no key behind.
	other := "https://c.example/inbox"
	if err := s.Record(ctx, other, false, true, now, rule); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Exists(ctx, s.Key(other)).Result(); n != 0 {
		t.Fatalf("a healthy light left a key")
	}
}

func TestDefaultPrefix(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	s := redisbreaker.New(c, nil)
	if got, want := s.Key("b.example"), "fedkit:stoplight:v5:metadata:b.example"; got != want {
		t.Fatalf("Key = %q, want %q", got, want)
	}
}

// Two clients stand for two processes: a light one opened holds the other's
// deliveries, and after the cool-off exactly one probe is admitted across
// both.
func TestSharedAcrossClients(t *testing.T) {
	ca, prefix := redistest.Client(t)
	cb := redis.NewClient(redistest.Options(t))
	t.Cleanup(func() { cb.Close() })
	a := redisbreaker.New(ca, &redisbreaker.Config{KeyPrefix: prefix})
	b := redisbreaker.New(cb, &redisbreaker.Config{KeyPrefix: prefix})
	ctx := context.Background()
	now := time.Now().Truncate(time.Millisecond)
	open(t, a, "b.example", now)
	adm, err := b.Admit(ctx, "b.example", now.Add(time.Second), rule)
	if err != nil || adm.Allow || !adm.Until.Equal(now.Add(rule.CoolOff)) {
		t.Fatalf("B after A opened it: %+v, %v", adm, err)
	}
	probes := make(chan bool, 20)
	done := make(chan struct{})
	for i := range 20 {
		s := a
		if i%2 == 1 {
			s = b
		}
		go func() {
			adm, err := s.Admit(ctx, "b.example", now.Add(rule.CoolOff), rule)
			if err != nil {
				t.Error(err)
			}
			probes <- adm.Probe && adm.Allow
			done <- struct{}{}
		}()
	}
	n := 0
	for range 20 {
		<-done
		if <-probes {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d probes across two clients, want 1", n)
	}
}

func TestRedisDownIsErrRedis(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	s := redisbreaker.New(c, nil)
	_, err := s.Admit(context.Background(), "b.example", time.Now(), rule)
	if !errors.Is(err, redisbreaker.ErrRedis) {
		t.Fatalf("Admit with Redis down: %v, want ErrRedis", err)
	}
	err = s.Record(context.Background(), "b.example", false, false, time.Now(), rule)
	if !errors.Is(err, redisbreaker.ErrRedis) {
		t.Fatalf("Record with Redis down: %v, want ErrRedis", err)
	}
}

// A probe reported after its replacement closed the light is old news:
// its failure neither reopens the light nor counts toward the threshold.
func TestStaleProbeIgnored(t *testing.T) {
	c, prefix := redistest.Client(t)
	s := redisbreaker.New(c, &redisbreaker.Config{KeyPrefix: prefix})
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	open(t, s, "b.example", now)
	lost := now.Add(rule.CoolOff)
	replaced := lost.Add(rule.CoolOff)
	for _, at := range []time.Time{lost, replaced} {
		if adm, err := s.Admit(ctx, "b.example", at, rule); err != nil || !adm.Probe {
			t.Fatalf("Admit at %v: %+v, %v; want a probe", at, adm, err)
		}
	}
	if err := s.Record(ctx, "b.example", true, true, replaced, rule); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(ctx, "b.example", true, false, replaced.Add(time.Second), rule); err != nil {
		t.Fatal(err)
	}
	if l, err := s.Light(ctx, "b.example"); err != nil || l != (driver.BreakerLight{Name: "b.example"}) {
		t.Fatalf("after the lost probe's late failure: %+v, %v; want closed with nothing stored", l, err)
	}
}

// Failures recorded at once from two clients are each counted, and the
// light opens exactly when the count reaches the threshold.
func TestFailureCountingAcrossClients(t *testing.T) {
	ca, prefix := redistest.Client(t)
	cb := redis.NewClient(redistest.Options(t))
	t.Cleanup(func() { cb.Close() })
	stores := []*redisbreaker.Store{
		redisbreaker.New(ca, &redisbreaker.Config{KeyPrefix: prefix}),
		redisbreaker.New(cb, &redisbreaker.Config{KeyPrefix: prefix}),
	}
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	r := driver.BreakerRule{Threshold: 40, CoolOff: time.Minute}
	var wg sync.WaitGroup
	for i := range 39 {
		wg.Go(func() {
			if err := stores[i%2].Record(ctx, "b.example", false, false, now, r); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	l, err := stores[0].Light(ctx, "b.example")
	if err != nil || l.Failures != 39 || l.Color(now) != driver.LightGreen {
		t.Fatalf("after 39 concurrent failures: %+v, %v; want 39 counted, still green", l, err)
	}
	if err := stores[1].Record(ctx, "b.example", false, false, now, r); err != nil {
		t.Fatal(err)
	}
	if l, err := stores[0].Light(ctx, "b.example"); err != nil || l.Color(now) != driver.LightRed {
		t.Fatalf("after the 40th: %+v, %v; want red", l, err)
	}
}
