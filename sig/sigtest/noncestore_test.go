package sigtest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/sigtest"
)

func TestMemoryNonceStore(t *testing.T) {
	t.Parallel()
	sigtest.TestNonceStore(t, func(testing.TB) sig.NonceStore { return sig.NewMemoryNonceStore(nil) })
}

// TestMemoryNonceStoreExpiry checks expiry and the bound with a fake clock.
func TestMemoryNonceStoreExpiry(t *testing.T) {
	t.Parallel()
	now := time.Unix(1785933296, 0)
	s := sig.NewMemoryNonceStore(&sig.MemoryNonceStoreConfig{Now: func() time.Time { return now }, MaxEntries: 2})
	id, _ := sig.ParseKeyID("https://a.example/actor#main-key")
	ctx := context.Background()
	reserve := func(nonce string, until time.Time) (bool, error) { return s.Reserve(ctx, id, nonce, until) }
	if ok, _ := reserve("a", now.Add(time.Minute)); !ok {
		t.Fatal("a not fresh")
	}
	if ok, _ := reserve("b", now.Add(2*time.Minute)); !ok {
		t.Fatal("b not fresh")
	}
	if _, err := reserve("c", now.Add(time.Minute)); !errors.Is(err, sig.ErrNonceStoreFull) {
		t.Fatalf("full store: %v", err)
	}
	now = now.Add(time.Minute) // a expires
	if ok, err := reserve("c", now.Add(time.Minute)); !ok || err != nil {
		t.Fatalf("c after sweep: %v %v", ok, err)
	}
	if ok, _ := reserve("b", now.Add(time.Minute)); ok {
		t.Fatal("b replay accepted before expiry")
	}
	now = now.Add(2 * time.Minute)
	if ok, _ := reserve("b", now.Add(time.Minute)); !ok {
		t.Fatal("b not fresh after expiry")
	}
}

func ExampleTestNonceStore() {
	// In a _test.go file of the package implementing the store:
	//
	//	func TestStore(t *testing.T) {
	//		sigtest.TestNonceStore(t, func(tb testing.TB) sig.NonceStore { return newStore(tb) })
	//	}
}
