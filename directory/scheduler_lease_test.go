package directory_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fedkit/fedkit/directory"
)

func TestLeaseRenewsEvery20Seconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &countingStore{MemoryStateStore: &directory.MemoryStateStore{}}
		l, err := directory.AcquireLease(context.Background(), store, schedOrigin, nil)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if err := l.Context().Err(); err != nil {
			t.Fatalf("renewed lease lost: %v", context.Cause(l.Context()))
		}
		if n := store.renews.Load(); n != 15 {
			t.Fatalf("%d renewals in 5 minutes, want 15 (every 20 s)", n)
		}
		if _, err := store.Acquire(context.Background(), schedOrigin, time.Minute); !errors.Is(err, directory.ErrLeaseHeld) {
			t.Fatalf("lease taken while held: %v", err)
		}
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
		if l.Context().Err() == nil || l.Lost() {
			t.Fatal("released lease context not cancelled, or reported lost")
		}
		if _, err := store.Acquire(context.Background(), schedOrigin, time.Minute); err != nil {
			t.Fatalf("lease not released: %v", err)
		}
	})
}

func TestLeaseLostWhenStoreUnreachableForTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &countingStore{MemoryStateStore: &directory.MemoryStateStore{}}
		l, err := directory.AcquireLease(context.Background(), store, schedOrigin, nil)
		if err != nil {
			t.Fatal(err)
		}
		store.failing.Store(true)
		time.Sleep(50 * time.Second) // two failed renewals: still inside the TTL
		synctest.Wait()
		if l.Context().Err() != nil {
			t.Fatal("lease given up before its TTL passed")
		}
		time.Sleep(15 * time.Second)
		synctest.Wait()
		if !errors.Is(context.Cause(l.Context()), directory.ErrLeaseLost) || !l.Lost() {
			t.Fatalf("cause = %v, want ErrLeaseLost", context.Cause(l.Context()))
		}
		if err := l.Release(); !errors.Is(err, directory.ErrLeaseLost) {
			t.Fatalf("Release of a lost lease = %v", err)
		}
	})
}

type countingStore struct {
	*directory.MemoryStateStore
	renews  atomic.Int64
	failing atomic.Bool
}

func (c *countingStore) Renew(ctx context.Context, origin, token string, ttl time.Duration) error {
	if c.failing.Load() {
		return errors.New("store unreachable")
	}
	c.renews.Add(1)
	return c.MemoryStateStore.Renew(ctx, origin, token, ttl)
}

func TestAcquireLeaseRefusesRenewNotShorterThanTTL(t *testing.T) {
	_, err := directory.AcquireLease(context.Background(), &directory.MemoryStateStore{}, "https://directory.example",
		&directory.LeaseOpts{TTL: time.Second, Renew: time.Second})
	if !errors.Is(err, directory.ErrSchedulerConfig) {
		t.Fatalf("err = %v, want ErrSchedulerConfig", err)
	}
}
