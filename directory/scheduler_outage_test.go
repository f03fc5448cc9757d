package directory_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/redisstate"
	"github.com/fedkit/fedkit/internal/redistest"
	"github.com/fedkit/fedkit/internal/testserver"
)

// outageStore is a redisstate store on a server of the test's own, through
// a client of its own (a replica's), failing fast while the server is away.
func outageStore(t *testing.T, srv *testserver.Server) directory.StateStore {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialTimeout: time.Second})
	t.Cleanup(func() { rdb.Close() })
	s, err := redisstate.New(rdb, &redisstate.Config{KeyPrefix: "relay:directory:"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// While Redis is away (killed -9) no replica can load its state or take
// the lease, so none sends, however long past due the heartbeat is, and
// the status read fails (the relay's status page says so). When Redis is
// back with its data, exactly one heartbeat goes out for the slot.
func TestSchedulerStopsWhileRedisIsAway(t *testing.T) {
	srv := redistest.Server(t, "--appendonly", "yes", "--appendfsync", "always")
	e := newSchedEnv(t, outageStore(t, srv), directory.Profile{})
	clock := &fakeClock{}
	clock.Freeze() // both replicas' startup ticks read one time (fakeClock.Freeze)
	cfg := &directory.SchedulerConfig{Now: clock.Now}
	a := e.scheduler(cfg)
	e.store = outageStore(t, srv)
	b := e.scheduler(cfg)
	ctx := context.Background()
	both := func() {
		var wg sync.WaitGroup
		for _, s := range []*directory.Scheduler{a, b} {
			wg.Go(func() { s.Tick(ctx) })
		}
		wg.Wait()
	}
	both()
	if got := e.ops(); !slices.Equal(got, []string{"v3 register"}) {
		t.Fatalf("startup requests = %q, want one register", got)
	}

	srv.Kill()
	clock.Advance(directory.HeartbeatInterval + directory.HeartbeatJitterMax + time.Minute)
	for range 3 {
		both()
		clock.Advance(time.Hour)
	}
	if got := e.ops(); len(got) != 1 {
		t.Fatalf("requests while Redis was away = %q, want none after the register", got[1:])
	}
	entries := []directory.Entry{{Origin: schedOrigin, Enabled: true}}
	if _, err := directory.LocalStatus(ctx, entries, e.store, clock.Now()); err == nil {
		t.Fatal("LocalStatus answered with Redis away; the status page would show stale state as current")
	}

	redistest.Restart(t, srv)
	both()
	both()
	if got := e.ops(); !slices.Equal(got, []string{"v3 register", "v3 heartbeat"}) {
		t.Fatalf("requests after Redis came back = %q, want the one overdue heartbeat", got)
	}
	st, err := directory.LocalStatus(ctx, entries, e.store, clock.Now())
	if err != nil || st[0].State != directory.StateHeartbeatCurrent {
		t.Fatalf("status after Redis came back: %+v, %v; want heartbeat current", st, err)
	}
}

// Redis restarts empty (no persistence) while the owner's request is in
// flight: its lease is gone, a successor takes the slot and records its
// state, and the former owner's write is refused by the fence.
func TestSchedulerFenceAcrossRedisRestart(t *testing.T) {
	srv := redistest.Server(t)
	e := newSchedEnv(t, outageStore(t, srv), directory.Profile{})
	a := e.scheduler(nil)
	successor := outageStore(t, srv)
	marker := directory.StateRecord{State: directory.StateRetrying, Attempts: 7, Diagnostic: directory.DiagTransport}
	e.lc.before = func(ctx context.Context, op string) error {
		srv.Kill()
		redistest.Restart(t, srv)
		tok, err := successor.Acquire(ctx, schedOrigin, time.Minute)
		if err != nil {
			return err
		}
		return successor.Save(ctx, schedOrigin, tok, marker)
	}
	a.Tick(context.Background())
	if got := e.ops(); len(got) != 1 {
		t.Fatalf("requests = %q, want A's one register", got)
	}
	if r := e.record(); r != marker {
		t.Fatalf("state = %+v, want the successor's %+v: the former owner wrote through the fence", r, marker)
	}
}
