package deliver_test

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/delivertest"
	"github.com/fedkit/fedkit/deliver/driver"
)

func TestSenderKeyErrorRetried(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ib := newInbox(t, b.clock, nil)
	if err := b.d.Send(context.Background(), "https://a.example/users/nobody#key", activity("1"), []string{ib.URL("/inbox")}); err != nil {
		t.Fatal(err)
	}
	b.runDue(t)
	if len(ib.requests()) != 0 {
		t.Fatal("sent without a key")
	}
	a := b.rec.Attempts()
	var derr *deliver.DeliveryError
	if len(a) != 1 || a[0].Outcome != deliver.AttemptFailed || !errors.As(a[0].Err, &derr) || derr.Err == nil {
		t.Fatalf("attempts %+v, want one retryable failure", a)
	}
	b.clock.Advance(30 * time.Second)
	if n := b.runDue(t); n != 1 {
		t.Fatalf("not retried after the policy delay")
	}
}

// brokenBreakers fails every call, as a Redis store with Redis down would.
type brokenBreakers struct{ calls atomic.Int32 }

func (s *brokenBreakers) Admit(context.Context, string, time.Time, driver.BreakerRule) (driver.Admission, error) {
	s.calls.Add(1)
	return driver.Admission{}, errors.New("redis down")
}

func (s *brokenBreakers) Record(context.Context, string, bool, bool, time.Time, driver.BreakerRule) error {
	s.calls.Add(1)
	return errors.New("redis down")
}

func TestBreakerStoreFailureDoesNotStopDelivery(t *testing.T) {
	t.Parallel()
	store := &brokenBreakers{}
	b := setup(t, func(c *deliver.Config) { c.Breaker = &deliver.BreakerConfig{Store: store} })
	ib := newInbox(t, b.clock, nil)
	b.send(t, "1", ib.URL("/inbox"))
	b.runDue(t)
	if len(ib.requests()) != 1 || store.calls.Load() != 2 {
		t.Fatalf("%d requests, %d store calls; want the delivery sent despite the store", len(ib.requests()), store.calls.Load())
	}
}

// flakyQueue fails its first Claim.
type flakyQueue struct {
	*deliver.MemoryQueue
	failed atomic.Bool
}

func (q *flakyQueue) Claim(ctx context.Context, o driver.ClaimOpts) ([]*driver.Job, error) {
	if q.failed.CompareAndSwap(false, true) {
		return nil, errors.New("connection reset")
	}
	return q.MemoryQueue.Claim(ctx, o)
}

func TestNoSynchronizationHeaderWithoutFollowers(t *testing.T) {
	t.Parallel()
	b := setup(t, nil) // no Config.Followers
	ib := newInbox(t, b.clock, nil)
	b.sendBatch(t, "1", deliver.Batch{SynchronizeCollection: true}, ib.URL("/inbox"))
	b.runDue(t)
	if got := ib.requests(); len(got) != 1 || got[0].Sync != "" {
		t.Fatalf("requests %+v, want one without the header", got)
	}
}

// recordingBreakers logs the outcomes recorded in a MemoryBreakerStore.
type recordingBreakers struct {
	deliver.MemoryBreakerStore
	mu       sync.Mutex
	recorded []bool
}

func (s *recordingBreakers) Record(ctx context.Context, light string, probe, ok bool, now time.Time, r driver.BreakerRule) error {
	s.mu.Lock()
	s.recorded = append(s.recorded, ok)
	s.mu.Unlock()
	return s.MemoryBreakerStore.Record(ctx, light, probe, ok, now, r)
}

// privateResolver resolves every name to an address the guard refuses.
type privateResolver struct{}

func (privateResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("10.0.0.1")}, nil
}

func TestGuardRefusalLeavesBreakerAlone(t *testing.T) {
	t.Parallel()
	store := &recordingBreakers{}
	c, err := client.New(&client.Config{Resolver: privateResolver{}})
	if err != nil {
		t.Fatal(err)
	}
	rec := &delivertest.Recorder{}
	cfg := &deliver.Config{Breaker: &deliver.BreakerConfig{Store: store}}
	rec.Install(cfg)
	d, err := deliver.New(&deliver.MemoryQueue{}, &keys{}, c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Send(context.Background(), testKeyID, activity("1"), []string{"https://rebound.example/inbox"}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Refused for good, since the name resolves to a private address; the
	// host never answered, so its breaker records neither a success nor a
	// failure.
	if f := rec.Failures(); len(f) != 1 || !errors.Is(f[0].Err, client.ErrBlocked) {
		t.Fatalf("failures %+v, want one blocked refusal", f)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if len(store.recorded) != 0 {
		t.Fatalf("breaker recorded %v for a request never sent", store.recorded)
	}
}
