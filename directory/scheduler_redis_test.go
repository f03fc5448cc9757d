package directory_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/redisstate"
	"github.com/fedkit/fedkit/internal/redistest"
)

// fakeClock is a shared scheduler clock that tests move by hand, while
// Redis lease TTLs keep running on real time: the real clock moved on by
// Advance, or, once frozen, the moment of Freeze moved on by Advance only.
type fakeClock struct{ off, frozen atomic.Int64 }

func (c *fakeClock) Now() time.Time {
	if f := c.frozen.Load(); f != 0 {
		return time.Unix(0, f).Add(time.Duration(c.off.Load()))
	}
	return time.Now().Add(time.Duration(c.off.Load()))
}

func (c *fakeClock) Advance(d time.Duration) { c.off.Add(int64(d)) }

// Freeze stops the clock where it is, for tests whose ticks must all read
// one time: a replica's startup pulse counts as served by another's
// reconciliation in the same second or later, so on a moving clock a
// second boundary between the two ticks would make it pulse again.
func (c *fakeClock) Freeze() { c.frozen.Store(time.Now().UnixNano()) }

func redisStore(t *testing.T) (directory.StateStore, func() directory.StateStore, func(context.Context) error) {
	t.Helper()
	rdb, prefix := redistest.Client(t)
	mk := func() directory.StateStore {
		s, err := redisstate.New(rdb, &redisstate.Config{KeyPrefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// dropLeases simulates every lease expiring at once.
	drop := func(ctx context.Context) error {
		keys, err := rdb.Keys(ctx, prefix+"*:lease").Result()
		if err != nil || len(keys) == 0 {
			return err
		}
		return rdb.Del(ctx, keys...).Err()
	}
	return mk(), mk, drop
}

func TestSchedulersRaceOneRequestPerSlot(t *testing.T) {
	store, newStore, _ := redisStore(t)
	e := newSchedEnv(t, store, directory.Profile{})
	clock := &fakeClock{}
	clock.Freeze()
	cfg := &directory.SchedulerConfig{Now: clock.Now}
	a := e.scheduler(cfg)
	e.store = newStore() // the second replica has its own store handle
	b := e.scheduler(cfg)
	ctx := context.Background()
	round := func() {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, s := range []*directory.Scheduler{a, b} {
			wg.Go(func() { <-start; s.Tick(ctx) })
		}
		close(start)
		wg.Wait()
	}
	round() // both start together: one startup registration between them
	round() // a second pass by either finds nothing due
	if got, want := e.ops(), []string{"v3 register"}; !slices.Equal(got, want) {
		t.Fatalf("startup requests = %q, want %q", got, want)
	}
	for slot := 1; slot <= 4; slot++ {
		clock.Advance(directory.HeartbeatInterval + directory.HeartbeatJitterMax + time.Minute)
		round()
		round()
		if n := len(e.ops()); n != 1+slot {
			t.Fatalf("slot %d: %d requests in total, want %d (one per due slot)", slot, n, 1+slot)
		}
	}
}

func TestSchedulerLeaseLoss(t *testing.T) {
	t.Run("FormerOwnerWriteRefused", func(t *testing.T) {
		store, newStore, drop := redisStore(t)
		e := newSchedEnv(t, store, directory.Profile{})
		a := e.scheduler(nil)
		successor := newStore()
		marker := directory.StateRecord{State: directory.StateRetrying, Attempts: 7, Diagnostic: directory.DiagTransport}
		e.lc.before = func(ctx context.Context, op string) error {
			// While A's request is in flight its lease expires and a
			// successor takes over and records its own state.
			if err := drop(ctx); err != nil {
				return err
			}
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
			t.Fatalf("state = %+v, want the successor's %+v", r, marker)
		}
	})
	t.Run("LossCancelsInFlight", func(t *testing.T) {
		store, newStore, drop := redisStore(t)
		e := newSchedEnv(t, store, directory.Profile{})
		a := e.scheduler(&directory.SchedulerConfig{LeaseTTL: time.Second, LeaseRenew: 50 * time.Millisecond})
		successor := newStore()
		var cancelled atomic.Bool
		e.lc.before = func(ctx context.Context, op string) error {
			if err := drop(ctx); err != nil {
				return err
			}
			if _, err := successor.Acquire(ctx, schedOrigin, time.Minute); err != nil {
				return err
			}
			select {
			case <-ctx.Done():
				cancelled.Store(errors.Is(context.Cause(ctx), directory.ErrLeaseLost))
				return ctx.Err()
			case <-time.After(10 * time.Second):
				return errors.New("in-flight request not cancelled after the lease was lost")
			}
		}
		a.Tick(context.Background())
		if !cancelled.Load() {
			t.Fatal("in-flight request was not cancelled with ErrLeaseLost")
		}
		if r := e.record(); !r.IsZero() {
			t.Fatalf("former owner wrote %+v", r)
		}
		if n := len(e.ops()); n != 0 {
			t.Fatalf("%d requests reached the Directory", n)
		}
	})
}

func TestManualUnderLease(t *testing.T) {
	store, _, _ := redisStore(t)
	e := newSchedEnv(t, store, directory.Profile{})
	ctx := context.Background()
	opts := &directory.ManualOpts{Store: e.store, Relay: schedActor}
	res, err := directory.RunManual(ctx, e.lc, directory.ManualSync, schedOrigin, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := e.record()
	if !r.Registered || r.Protocol != res.Version || r.ProfileDigest != e.client.ProfileDigest() || r.NextHeartbeat.Before(time.Now().Add(directory.HeartbeatInterval)) {
		t.Fatalf("record after manual sync: %+v", r)
	}
	// On Redis: a manual heartbeat under the lease, then a scheduler pass,
	// make exactly the manual request. (TestManualSuccessMovesSchedulerSlot
	// shows the recorded success moving the scheduler's slot.)
	s := e.scheduler(nil)
	s.Tick(ctx)
	before := len(e.ops())
	if _, err := directory.RunManual(ctx, e.lc, directory.ManualHeartbeat, schedOrigin, opts); err != nil {
		t.Fatal(err)
	}
	s.Tick(ctx)
	if n := len(e.ops()) - before; n != 1 {
		t.Fatalf("%d requests after a manual heartbeat, want just the manual one", n)
	}
	// A held lease makes the command refuse rather than race (without
	// waiting here; TestManualWaitsForBusyScheduler covers the wait).
	tok, err := e.store.Acquire(ctx, schedOrigin, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	noWait := &directory.ManualOpts{Store: e.store, Relay: schedActor, Lease: &directory.LeaseOpts{Wait: -1}}
	if _, err := directory.RunManual(ctx, e.lc, directory.ManualRegister, schedOrigin, noWait); !errors.Is(err, directory.ErrLeaseHeld) {
		t.Fatalf("manual under a held lease: %v, want ErrLeaseHeld", err)
	}
	_ = e.store.Release(ctx, schedOrigin, tok)
	// Without a store (scheduler gate off) the command runs alone.
	if _, err := directory.RunManual(ctx, e.lc, directory.ManualHeartbeat, schedOrigin, nil); err != nil {
		t.Fatal(err)
	}
}

// gatedStore holds Acquire while a gate is set, to pin the interleaving
// "B saw the slot due, A served it, then B got the lease". entered is
// closed once a held Acquire has begun, so the test waits on an event, not
// a sleep.
type gatedStore struct {
	directory.StateStore
	mu      sync.Mutex
	gate    chan struct{}
	entered chan struct{}
}

func (g *gatedStore) Acquire(ctx context.Context, origin string, ttl time.Duration) (string, error) {
	g.mu.Lock()
	gate, entered := g.gate, g.entered
	g.gate, g.entered = nil, nil // hold only the first Acquire
	g.mu.Unlock()
	if gate != nil {
		close(entered)
		<-gate
	}
	return g.StateStore.Acquire(ctx, origin, ttl)
}

func (g *gatedStore) set(gate, entered chan struct{}) {
	g.mu.Lock()
	g.gate, g.entered = gate, entered
	g.mu.Unlock()
}

func TestSchedulerRereadsUnderLease(t *testing.T) {
	store, newStore, _ := redisStore(t)
	e := newSchedEnv(t, store, directory.Profile{})
	clock := &fakeClock{}
	clock.Freeze()
	cfg := &directory.SchedulerConfig{Now: clock.Now}
	a := e.scheduler(cfg)
	gs := &gatedStore{StateStore: newStore()}
	e.store = gs
	b := e.scheduler(cfg)
	ctx := context.Background()
	a.Tick(ctx) // startup register
	b.Tick(ctx) // B's startup pulse was served by A after B started
	clock.Advance(directory.HeartbeatInterval + directory.HeartbeatJitterMax + time.Minute)
	gate, entered := make(chan struct{}), make(chan struct{})
	gs.set(gate, entered)
	done := make(chan struct{})
	go func() { b.Tick(ctx); close(done) }()
	// B has loaded the record, found the slot due and waits for the lease;
	// A serves the slot.
	<-entered
	a.Tick(ctx)
	close(gate)
	<-done
	if got, want := e.ops(), []string{"v3 register", "v3 heartbeat"}; !slices.Equal(got, want) {
		t.Fatalf("requests = %q, want %q", got, want)
	}
}

func TestSchedulerShutdownReleasesLease(t *testing.T) {
	store, newStore, _ := redisStore(t)
	e := newSchedEnv(t, store, directory.Profile{})
	s := e.scheduler(nil)
	ctx, cancel := context.WithCancel(context.Background())
	inFlight := make(chan struct{})
	e.lc.before = func(c context.Context, op string) error {
		close(inFlight)
		<-c.Done() // SIGTERM arrives mid-request
		return &directory.TransportError{Canceled: true}
	}
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	<-inFlight
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
	// Released, not left to expire: a successor owns it at once.
	if _, err := newStore().Acquire(context.Background(), schedOrigin, time.Minute); err != nil {
		t.Fatalf("lease not released on shutdown: %v", err)
	}
	if r := e.record(); !r.IsZero() {
		t.Fatalf("cancelled attempt recorded %+v", r)
	}
}

func TestLeaseReleasedOnCompletion(t *testing.T) {
	store, _, _ := redisStore(t)
	e := newSchedEnv(t, store, directory.Profile{})
	e.scheduler(nil).Tick(context.Background())
	if _, err := e.store.Acquire(context.Background(), schedOrigin, time.Minute); err != nil {
		t.Fatalf("lease still held after the reconciliation: %v", err)
	}
}
