package deliver_test

import (
	"context"
	"crypto"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fedkit/fedkit/deliver"
)

// slowKeys blocks every load until release is closed.
type slowKeys struct {
	release chan struct{}
	loads   atomic.Int64
	fail    atomic.Bool
}

func (k *slowKeys) Key(ctx context.Context, keyID string) (crypto.Signer, error) {
	k.loads.Add(1)
	<-k.release
	if k.fail.Load() {
		return nil, errors.New("db down")
	}
	return testKey, nil
}

func (k *slowKeys) Gone(context.Context, string) (bool, error) { return true, nil }

func TestCachingSenderKeysConcurrentMissesLoadOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &slowKeys{release: make(chan struct{})}
		c := deliver.NewCachingSenderKeys(inner, nil)
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				if _, err := c.Key(context.Background(), testKeyID); err != nil {
					t.Error(err)
				}
			})
		}
		synctest.Wait() // every caller is waiting on the one load
		close(inner.release)
		wg.Wait()
		if inner.loads.Load() != 1 {
			t.Fatalf("%d loads for 50 concurrent misses, want 1", inner.loads.Load())
		}
	})
}

func TestCachingSenderKeysTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &slowKeys{release: make(chan struct{})}
		close(inner.release)
		c := deliver.NewCachingSenderKeys(inner, &deliver.CachingConfig{TTL: time.Minute})
		ctx := context.Background()
		c.Key(ctx, testKeyID)
		time.Sleep(59 * time.Second)
		c.Key(ctx, testKeyID)
		if n := inner.loads.Load(); n != 1 {
			t.Fatalf("%d loads within the TTL", n)
		}
		time.Sleep(time.Second)
		c.Key(ctx, testKeyID)
		if n := inner.loads.Load(); n != 2 {
			t.Fatalf("%d loads after the TTL, want 2", n)
		}
		c.Forget(testKeyID)
		c.Key(ctx, testKeyID)
		if n := inner.loads.Load(); n != 3 {
			t.Fatalf("%d loads after Forget, want 3", n)
		}
	})
}

func TestCachingSenderKeysFailuresNotCached(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &slowKeys{release: make(chan struct{})}
		close(inner.release)
		inner.fail.Store(true)
		c := deliver.NewCachingSenderKeys(inner, nil)
		if _, err := c.Key(context.Background(), testKeyID); err == nil {
			t.Fatal("error not passed on")
		}
		inner.fail.Store(false)
		if _, err := c.Key(context.Background(), testKeyID); err != nil || inner.loads.Load() != 2 {
			t.Fatalf("failed load was cached: %v, %d loads", err, inner.loads.Load())
		}
		if gone, _ := c.Gone(context.Background(), testKeyID); !gone {
			t.Fatal("Gone not passed through")
		}
	})
}

func TestCachingSenderKeysCallerCancelDoesNotFailOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &slowKeys{release: make(chan struct{})}
		c := deliver.NewCachingSenderKeys(inner, nil)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 2)
		go func() { _, err := c.Key(ctx, testKeyID); errc <- err }()
		synctest.Wait()
		go func() { _, err := c.Key(context.Background(), testKeyID); errc <- err }()
		synctest.Wait()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled caller got %v", err)
		}
		close(inner.release)
		if err := <-errc; err != nil {
			t.Fatalf("the other caller failed: %v", err)
		}
	})
}

func TestCachingSenderKeysBounded(t *testing.T) {
	inner := &slowKeys{release: make(chan struct{})}
	close(inner.release)
	c := deliver.NewCachingSenderKeys(inner, &deliver.CachingConfig{MaxEntries: 10})
	for i := range 100 {
		c.Key(context.Background(), testKeyID+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	before := inner.loads.Load()
	// Some earlier keys were evicted, so asking for all again loads some.
	for i := range 100 {
		c.Key(context.Background(), testKeyID+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	if inner.loads.Load()-before < 90 {
		t.Fatalf("only %d reloads: cache not bounded to 10", inner.loads.Load()-before)
	}
}
