package deliver_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fedkit/fedkit/deliver"
)

func TestHostLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := deliver.NewHostLimiter(2)
		var inflight, peak atomic.Int32
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				release, err := l.Acquire(context.Background(), "b.example")
				if err != nil {
					t.Error(err)
					return
				}
				n := inflight.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				time.Sleep(time.Second)
				inflight.Add(-1)
				release()
				release() // idempotent
			})
		}
		// Another host is not held up by the first.
		release, err := l.Acquire(context.Background(), "c.example")
		if err != nil {
			t.Fatal(err)
		}
		release()
		wg.Wait()
		if peak.Load() != 2 {
			t.Fatalf("peak %d in flight, want 2", peak.Load())
		}
		if n := l.InFlight("b.example"); n != 0 {
			t.Fatalf("InFlight %d after all released", n)
		}
	})
}

func TestHostLimiterCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := deliver.NewHostLimiter(1)
		release, _ := l.Acquire(context.Background(), "b.example")
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := l.Acquire(ctx, "b.example"); err == nil {
			t.Fatal("Acquire past a full host's limit returned without waiting")
		}
		if _, ok := l.TryAcquire("b.example"); ok {
			t.Fatal("TryAcquire took a slot past the limit")
		}
		release()
		if r, ok := l.TryAcquire("b.example"); !ok {
			t.Fatal("TryAcquire failed with a slot free")
		} else {
			r()
		}
		if r, err := l.Acquire(context.Background(), "b.example"); err != nil {
			t.Fatal(err)
		} else {
			r()
		}
	})
}
