package deliver_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/driver/drivertest"
	"github.com/fedkit/fedkit/internal/fedsim"
)

func TestMemoryAvailabilityStoreConformance(t *testing.T) {
	drivertest.TestAvailabilityStore(t, func(testing.TB) driver.AvailabilityStore { return deliver.NewMemoryAvailabilityStore(0) })
}

// However many hosts fail, the memory store keeps its bound, and an
// unavailable host is displaced only when every host kept is unavailable.
func TestMemoryAvailabilityStoreBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := deliver.NewMemoryAvailabilityStore(10)
	rule := driver.AvailabilityRule{Days: 1}
	now := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, _, err := s.Failure(ctx, "gone.example", now, rule); err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if _, _, err := s.Failure(ctx, fmt.Sprintf("h%d.example", i), now, driver.AvailabilityRule{Days: 7}); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Len(); n > 10 {
		t.Fatalf("%d hosts kept, bound 10", n)
	}
	if _, down, _ := s.Unavailable(ctx, "gone.example"); !down {
		t.Fatal("the unavailable host was displaced by available ones")
	}
}

// availBundle is a Deliverer on fedsim whose clock the test moves by days.
func setupAvailability(t *testing.T, store driver.AvailabilityStore, skipped *[]deliver.UnavailableSkip) *simBundle {
	t.Helper()
	var mu sync.Mutex
	return setupSim(t, func(c *deliver.Config) {
		c.Availability = deliver.AvailabilityConfig{Store: store, OnSkipped: func(_ context.Context, s deliver.UnavailableSkip) {
			mu.Lock()
			defer mu.Unlock()
			*skipped = append(*skipped, s)
		}}
		c.Retry = deliver.ExponentialRetry(time.Second, time.Second, 1)
		c.DisableBreaker = true
	})
}

// A host that dies is tried for seven distinct days, then skipped (settled
// as skipped, reported to OnSkipped) and listed; when it comes back and an
// activity from it arrives (SeenAlive), deliveries resume.
func TestHostDiesAndComesBack(t *testing.T) {
	t.Parallel()
	store := deliver.NewMemoryAvailabilityStore(0)
	var skipped []deliver.UnavailableSkip
	b := setupAvailability(t, store, &skipped)
	const host = "dying.example"
	b.sim.SetHost(host, fedsim.Profile{Status: 503})
	hostKey := b.sim.URL(host, "")[len("http://"):]
	for d := 1; d <= deliver.AvailabilityDaysDefault; d++ {
		b.deliverOne(t, fmt.Sprint(d), host)
		b.clock.Advance(24 * time.Hour)
	}
	if got := b.sim.Stats(host).Received; got != deliver.AvailabilityDaysDefault {
		t.Fatalf("%d requests over the seven days, want 7", got)
	}
	list, _ := store.ListUnavailable(context.Background())
	if len(list) != 1 || list[0].Host != hostKey {
		t.Fatalf("unavailable %+v, want %s", list, hostKey)
	}
	b.deliverOne(t, "8", host)
	if got := b.sim.Stats(host).Received; got != deliver.AvailabilityDaysDefault {
		t.Fatalf("the unavailable host got a request (%d)", got)
	}
	if len(skipped) != 1 || skipped[0].Host != hostKey || !skipped[0].Since.Equal(list[0].Since) {
		t.Fatalf("OnSkipped saw %+v", skipped)
	}
	st := b.rec.Settled()
	last := st[len(st)-1]
	if last.Result != driver.ResultSkipped || !errors.Is(last.Err, deliver.ErrUnavailable) {
		t.Fatalf("settled %+v, want skipped with ErrUnavailable", last)
	}

	b.sim.SetHost(host, fedsim.Profile{})
	if err := b.d.SeenAlive(context.Background(), hostKey); err != nil {
		t.Fatal(err)
	}
	b.deliverOne(t, "9", host)
	if got := b.sim.Stats(host).Received; got != deliver.AvailabilityDaysDefault+1 {
		t.Fatalf("after SeenAlive: %d requests, want one more", got)
	}
}

// Failures on fewer distinct days, or with a success between, never make
// a host unavailable; a refusal (a 4xx) is no failure of the host.
func TestAvailabilityNeedsDistinctDaysWithoutSuccess(t *testing.T) {
	t.Parallel()
	store := deliver.NewMemoryAvailabilityStore(0)
	var skipped []deliver.UnavailableSkip
	b := setupAvailability(t, store, &skipped)
	const flaky, refusing = "flaky.example", "refusing.example"
	b.sim.SetHost(refusing, fedsim.Profile{Status: 404})
	// Six failure days, a good one, six more failure days.
	const days = 2*deliver.AvailabilityDaysDefault - 1
	for d := 1; d <= days; d++ {
		status := 503
		if d == deliver.AvailabilityDaysDefault {
			status = 202 // one good day in the middle
		}
		b.sim.SetHost(flaky, fedsim.Profile{Status: status})
		b.deliverOne(t, fmt.Sprint(d), flaky)
		b.deliverOne(t, fmt.Sprint(d)+"r", refusing)
		b.clock.Advance(24 * time.Hour)
		if list, _ := store.ListUnavailable(context.Background()); len(list) != 0 {
			t.Fatalf("day %d: unavailable %+v", d, list)
		}
	}
	if len(skipped) != 0 {
		t.Fatalf("skipped %+v", skipped)
	}
	if got := b.sim.Stats(refusing).Received; got != days {
		t.Fatalf("refusing host got %d, want every delivery", got)
	}
}

// With DisableAvailability a dead host is tried forever.
func TestDisableAvailability(t *testing.T) {
	t.Parallel()
	b := setupSim(t, func(c *deliver.Config) {
		c.DisableAvailability = true
		c.Retry = deliver.ExponentialRetry(time.Second, time.Second, 1)
	})
	b.sim.SetHost("dead.example", fedsim.Profile{Status: 503})
	for d := range 10 {
		b.deliverOne(t, fmt.Sprint(d), "dead.example")
		b.clock.Advance(24 * time.Hour)
	}
	if got := b.sim.Stats("dead.example").Received; got != 10 {
		t.Fatalf("%d requests, want 10", got)
	}
}
