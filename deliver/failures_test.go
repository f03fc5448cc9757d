package deliver_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
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
	if len(a) != 1 || a[0].Outcome != deliver.AttemptFailed || !errors.Is(a[0].Err, deliver.ErrRetryable) {
		t.Fatalf("attempts %+v, want one retryable failure", a)
	}
	b.clock.Advance(30 * time.Second)
	if n := b.runDue(t); n != 1 {
		t.Fatalf("not retried after the policy delay")
	}
}

// brokenBreakers fails every call, as a Redis store with Redis down would.
type brokenBreakers struct{ calls atomic.Int32 }

func (s *brokenBreakers) Admit(context.Context, string, time.Time, deliver.BreakerRule) (deliver.Admission, error) {
	s.calls.Add(1)
	return deliver.Admission{}, errors.New("redis down")
}

func (s *brokenBreakers) Record(context.Context, string, bool, bool, time.Time, deliver.BreakerRule) error {
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

func (q *flakyQueue) Claim(ctx context.Context, o deliver.ClaimOpts) ([]*deliver.Job, error) {
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
