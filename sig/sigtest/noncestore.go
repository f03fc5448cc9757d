package sigtest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/internal/suite"
	"github.com/fedkit/fedkit/sig"
)

// TestNonceStore checks a sig.NonceStore: a new (key ID, nonce) pair is
// fresh once, a repeat is not, pairs differing in either part are
// independent, and of concurrent reservations of one pair exactly one
// wins. newStore must return an empty store each time.
func TestNonceStore(t testing.TB, newStore func(tb testing.TB) sig.NonceStore) {
	t.Helper()
	ctx := context.Background()
	until := time.Now().Add(10 * time.Minute)
	a, _ := sig.ParseKeyID("https://a.example/actor#main-key")
	b, _ := sig.ParseKeyID("https://b.example/actor#main-key")
	reserve := func(t testing.TB, s sig.NonceStore, id sig.KeyID, nonce string) bool {
		t.Helper()
		fresh, err := s.Reserve(ctx, id, nonce, until)
		if err != nil {
			t.Fatalf("Reserve(%v, %q): %v", id, nonce, err)
		}
		return fresh
	}
	suite.Run(t, "FreshThenReplay", false, func(t testing.TB) {
		s := newStore(t)
		if !reserve(t, s, a, "n1") {
			t.Fatal("first reservation was not fresh")
		}
		if reserve(t, s, a, "n1") {
			t.Fatal("repeated reservation was fresh")
		}
	})
	suite.Run(t, "IndependentPairs", false, func(t testing.TB) {
		s := newStore(t)
		for _, p := range []struct {
			id    sig.KeyID
			nonce string
		}{{a, "n1"}, {a, "n2"}, {b, "n1"}} {
			if !reserve(t, s, p.id, p.nonce) {
				t.Fatalf("(%v, %q) was not fresh", p.id, p.nonce)
			}
		}
	})
	suite.Run(t, "NoConcatenationCollision", false, func(t testing.TB) {
		s := newStore(t)
		x, _ := sig.ParseKeyID("k1")
		y, _ := sig.ParseKeyID("k")
		if !reserve(t, s, x, "n") || !reserve(t, s, y, "1n") {
			t.Fatal("(k1, n) and (k, 1n) collided")
		}
	})
	suite.Run(t, "ConcurrentOneWins", false, func(t testing.TB) {
		s := newStore(t)
		var wins atomic.Int32
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				fresh, err := s.Reserve(ctx, a, "race", until)
				if err != nil {
					t.Error(err)
				}
				if fresh {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		if n := wins.Load(); n != 1 {
			t.Fatalf("%d concurrent reservations won, want 1", n)
		}
	})
	suite.Run(t, "ManyNonces", false, func(t testing.TB) {
		s := newStore(t)
		for i := range 200 {
			if !reserve(t, s, a, fmt.Sprintf("n-%d", i)) {
				t.Fatalf("nonce %d not fresh", i)
			}
		}
	})
}
