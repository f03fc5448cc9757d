package deliver_test

import (
	"context"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
)

// clockedQueue records the clock Notify is given.
type clockedQueue struct {
	*deliver.MemoryQueue
	got chan time.Time
}

var _ driver.Notifier = (*clockedQueue)(nil)

func (q *clockedQueue) Notify(ctx context.Context, now func() time.Time, wake func()) error {
	q.got <- now()
	<-ctx.Done()
	return nil
}

// A test sets time once, on the Deliverer: a CachingSenderKeys with no Now
// of its own and the Queue's Notify run on the Deliverer's clock.
func TestClockHandedOn(t *testing.T) {
	t.Parallel()
	clk := newClock()
	inner := &slowKeys{release: make(chan struct{})}
	close(inner.release)
	inherits := deliver.NewCachingSenderKeys(inner, &deliver.CachingConfig{TTL: time.Minute})
	q := &clockedQueue{MemoryQueue: &deliver.MemoryQueue{}, got: make(chan time.Time, 1)}
	cfg := deliver.DefaultConfig()
	cfg.Now = clk.Now
	d, err := deliver.New(q, inherits, testClient(t), cfg)
	if err != nil {
		t.Fatal(err)
	}

	stop := startRun(t, d)
	if got := <-q.got; !got.Equal(clk.Now()) {
		t.Errorf("Notify's clock reads %v, want the Deliverer's %v", got, clk.Now())
	}
	stop()

	ctx := context.Background()
	if _, err := inherits.Key(ctx, testKeyID); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Minute) // past the TTL on the Deliverer's clock only
	if _, err := inherits.Key(ctx, testKeyID); err != nil {
		t.Fatal(err)
	}
	if n := inner.loads.Load(); n != 2 {
		t.Errorf("%d loads, want 2: the key cache did not expire on the Deliverer's clock", n)
	}

	// A cache with a clock of its own keeps it.
	own := newClock()
	inner2 := &slowKeys{release: inner.release}
	keeps := deliver.NewCachingSenderKeys(inner2, &deliver.CachingConfig{TTL: time.Minute, Now: own.Now})
	if _, err := deliver.New(&deliver.MemoryQueue{}, keeps, testClient(t), cfg); err != nil {
		t.Fatal(err)
	}
	_, _ = keeps.Key(ctx, testKeyID)
	clk.Advance(2 * time.Minute)
	_, _ = keeps.Key(ctx, testKeyID)
	if n := inner2.loads.Load(); n != 1 {
		t.Errorf("%d loads, want 1: the cache's own clock was replaced", n)
	}
}
