package redisbreaker_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/redisbreaker"
	"github.com/fedkit/fedkit/internal/redistest"
)

// While Redis is away the breakers fail open: deliveries go on, to every
// host, even one whose light was open, and their outcomes are not counted.
// When Redis is back with its data (an append-only file), the open light
// holds again; the healthy host was never held.
func TestRedisRestartFailsOpen(t *testing.T) {
	srv := redistest.Server(t, "--appendonly", "yes", "--appendfsync", "always")
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialTimeout: time.Second})
	t.Cleanup(func() { rdb.Close() })
	store := redisbreaker.New(rdb, &redisbreaker.Config{KeyPrefix: "outage:"})

	var mu sync.Mutex
	hits := map[string]int{}
	inbox := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.Host]++
		mu.Unlock()
		if strings.HasPrefix(r.Host, "down.example") {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer inbox.Close()
	port := inbox.Listener.Addr().(*net.TCPAddr).Port
	c, err := client.New(&client.Config{AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Resolver: loopback{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	now := time.UnixMilli(1_700_000_000_000) // one instant: no retry comes due
	var held int
	d, err := deliver.New(&deliver.MemoryQueue{}, staticKeys{}, c, &deliver.Config{
		Breaker: &deliver.BreakerConfig{Threshold: threshold, CoolOff: time.Hour, Store: store},
		Now:     func() time.Time { return now },
		OnAttempt: func(_ context.Context, a deliver.Attempt) {
			if a.Outcome == deliver.AttemptHeld {
				mu.Lock()
				held++
				mu.Unlock()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	deliver := func(host string, count int) {
		t.Helper()
		var inboxes []string
		for range count {
			n++
			inboxes = append(inboxes, fmt.Sprintf("http://%s:%d/users/u%d/inbox", host, port, n))
		}
		act := []byte(fmt.Sprintf(`{"id":"https://a.example/activities/%d","actor":"https://a.example/users/alice"}`, n))
		if err := d.Send(context.Background(), "https://a.example/users/alice#main-key", act, inboxes); err != nil {
			t.Fatal(err)
		}
		if _, err := d.RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	state := func(wantDown, wantUp, wantHeld int, when string) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		if hits["down.example:"+fmt.Sprint(port)] != wantDown || hits["up.example:"+fmt.Sprint(port)] != wantUp || held != wantHeld {
			t.Fatalf("%s: requests %v, %d held; want %d to down.example, %d to up.example, %d held",
				when, hits, held, wantDown, wantUp, wantHeld)
		}
	}

	deliver("down.example", threshold) // opens its light
	deliver("down.example", 2)
	deliver("up.example", 2)
	state(threshold, 2, 2, "Redis up")

	srv.Kill()
	deliver("down.example", 2)
	deliver("up.example", 2)
	state(threshold+2, 4, 2, "Redis away: every delivery goes")

	redistest.Restart(t, srv)
	deliver("down.example", 2)
	deliver("up.example", 2)
	state(threshold+2, 6, 4, "Redis back: the open light holds again")
	l, err := store.Light(context.Background(), fmt.Sprintf("down.example:%d", port)) // lights are per host
	if err != nil || l.Color(now) != driver.LightRed {
		t.Fatalf("light after the restart: %+v, %v; want red", l, err)
	}
	if l.Failures != 0 {
		t.Fatalf("light after the restart: %+v; the outage's failures must not count", l)
	}
}
