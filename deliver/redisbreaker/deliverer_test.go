package redisbreaker_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/redisbreaker"
	"github.com/fedkit/fedkit/internal/redistest"
)

type staticKeys struct{}

var testKey = ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))

func (staticKeys) Key(context.Context, string) (crypto.Signer, error) { return testKey, nil }
func (staticKeys) Gone(context.Context, string) (bool, error)         { return false, nil }

type loopback struct{}

func (loopback) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

const (
	childEnv  = "FEDKIT_REDISBREAKER_CHILD"
	threshold = 3
)

// deliverer returns a Deliverer with its own Redis client, as a separate
// process would have, sharing breakers under prefix.
func deliverer(t testing.TB, prefix string, now func() time.Time, attempts *[4]atomic.Int64) *deliver.Deliverer {
	t.Helper()
	rdb := redis.NewClient(redistest.Options(t))
	t.Cleanup(func() { rdb.Close() })
	c, err := client.New(&client.Config{AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Resolver: loopback{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	d, err := deliver.New(&deliver.MemoryQueue{}, staticKeys{}, c, &deliver.Config{
		Breaker: &deliver.BreakerConfig{Threshold: threshold, CoolOff: time.Minute,
			Store: redisbreaker.New(rdb, &redisbreaker.Config{KeyPrefix: prefix})},
		Now: now,
		OnAttempt: func(_ context.Context, a deliver.Attempt) {
			if attempts != nil {
				attempts[a.Outcome-1].Add(1)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func send(t testing.TB, d *deliver.Deliverer, port, from, n int) {
	t.Helper()
	var inboxes []string
	for i := range n {
		inboxes = append(inboxes, fmt.Sprintf("http://down.example:%d/users/u%d/inbox", port, from+i))
	}
	act := []byte(`{"id":"https://a.example/activities/1","actor":"https://a.example/users/alice"}`)
	if err := d.Send(context.Background(), "https://a.example/users/alice#main-key", act, inboxes); err != nil {
		t.Fatal(err)
	}
	if _, err := d.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestBreakerChild is process A of TestBreakerAcrossProcesses.
func TestBreakerChild(t *testing.T) {
	v := os.Getenv(childEnv)
	if v == "" {
		t.Skip("run by TestBreakerAcrossProcesses")
	}
	var prefix string
	var port int
	if _, err := fmt.Sscanf(v, "%d %s", &port, &prefix); err != nil {
		t.Fatal(err)
	}
	// Threshold deliveries to one host, each failing once, open its light.
	send(t, deliverer(t, prefix, time.Now, nil), port, 0, threshold)
}

// A breaker opened by process A holds process B's deliveries unsent, and
// after the cool-off exactly one probe goes out across B and C.
func TestBreakerAcrossProcesses(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("in the child")
	}
	_, prefix := redistest.Client(t) // cleans the prefix up
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port

	child := exec.Command(os.Args[0], "-test.run=^TestBreakerChild$", "-test.count=1")
	// The child must use this process's Redis: with no server on 6379 each
	// process would otherwise start a throwaway of its own and share nothing.
	child.Env = append(os.Environ(), fmt.Sprintf("%s=%d %s", childEnv, port, prefix),
		"FEDKIT_TEST_REDIS_URL="+redistest.URL(t))
	if out, err := child.CombinedOutput(); err != nil {
		t.Fatalf("process A: %v\n%s", err, out)
	}
	if hits.Load() != threshold {
		t.Fatalf("process A made %d requests, want %d", hits.Load(), threshold)
	}

	var attB [4]atomic.Int64
	send(t, deliverer(t, prefix, time.Now, &attB), port, 100, 5)
	if hits.Load() != threshold || attB[deliver.AttemptHeld-1].Load() != 5 {
		t.Fatalf("process B: %d requests reached the host, %d held; want none sent, 5 held",
			hits.Load()-threshold, attB[deliver.AttemptHeld-1].Load())
	}

	// After the cool-off, B and C (own clients) deliver at once: one probe.
	later := func() time.Time { return time.Now().Add(time.Minute + time.Second) }
	b, c := deliverer(t, prefix, later, nil), deliverer(t, prefix, later, nil)
	var wg sync.WaitGroup
	wg.Go(func() { send(t, b, port, 200, 5) })
	wg.Go(func() { send(t, c, port, 300, 5) })
	wg.Wait()
	if got := hits.Load() - threshold; got != 1 {
		t.Fatalf("%d requests after the cool-off across two processes, want exactly one probe", got)
	}
}
