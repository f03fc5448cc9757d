// Package seentest is the conformance suite every relay.SeenSet passes.
//
//	func TestSeen(t *testing.T) {
//		seentest.TestSeenSet(t, func(t *testing.T) relay.SeenSet { return newSet(t) })
//	}
package seentest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/examples/relay/internal/relay"
)

// TestSeenSet runs the suite; newSet returns an empty set isolated to t.
// Expiry is left to each backend's own tests: Redis and Postgres measure
// windows by their own clocks, which a test cannot set.
func TestSeenSet(t *testing.T, newSet func(t *testing.T) relay.SeenSet) {
	ctx := context.Background()
	t.Run("mark has forget", func(t *testing.T) {
		s := newSet(t)
		if ok, err := s.Mark(ctx, "activity:1", time.Hour); err != nil || !ok {
			t.Fatalf("first Mark = %v, %v; want true", ok, err)
		}
		if ok, err := s.Mark(ctx, "activity:1", time.Hour); err != nil || ok {
			t.Fatalf("second Mark = %v, %v; want false", ok, err)
		}
		if has, err := s.Has(ctx, "activity:1"); err != nil || !has {
			t.Fatalf("Has = %v, %v; want true", has, err)
		}
		if has, err := s.Has(ctx, "object:1"); err != nil || has {
			t.Fatalf("Has of an unmarked key = %v, %v; want false", has, err)
		}
		if err := s.Forget(ctx, "activity:1"); err != nil {
			t.Fatal(err)
		}
		if has, _ := s.Has(ctx, "activity:1"); has {
			t.Fatal("Has after Forget")
		}
		if ok, err := s.Mark(ctx, "activity:1", time.Hour); err != nil || !ok {
			t.Fatalf("Mark after Forget = %v, %v; want true", ok, err)
		}
		if err := s.Forget(ctx, "never:marked"); err != nil {
			t.Fatalf("Forget of an unmarked key: %v", err)
		}
	})
	t.Run("one winner", func(t *testing.T) {
		s := newSet(t)
		var wins atomic.Int32
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				if ok, err := s.Mark(ctx, "activity:race", time.Hour); err == nil && ok {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("%d concurrent Marks won; want 1", wins.Load())
		}
	})
}
