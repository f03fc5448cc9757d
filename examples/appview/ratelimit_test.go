package main

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fedkit/fedkit/identity"
)

type nopResolver struct{ calls int }

func (n *nopResolver) LookupDID(_ context.Context, did identity.DID) (*identity.Identity, error) {
	n.calls++
	return &identity.Identity{DID: did}, nil
}

func (n *nopResolver) ResolveHandle(context.Context, identity.Handle) (identity.DID, error) {
	return "", nil
}

func TestLimitedResolverSpacesCallsPerHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &nopResolver{}
		r := newLimitedResolver(inner, 2) // one call per 500 ms per host
		ctx := context.Background()
		start := time.Now()
		for range 5 {
			if _, err := r.LookupDID(ctx, identity.DID(plcDID("a"))); err != nil {
				t.Fatal(err)
			}
		}
		if got := time.Since(start); got != 2*time.Second {
			t.Errorf("5 PLC lookups took %s, want 2s (4 spacings of 500ms)", got)
		}
		// Another host is not held back by the PLC queue.
		start = time.Now()
		if _, err := r.LookupDID(ctx, "did:web:example.test"); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 0 {
			t.Errorf("did:web lookup waited %s", got)
		}
		// A cancelled caller stops waiting.
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, _ = r.LookupDID(ctx, identity.DID(plcDID("b")))
		if _, err := r.LookupDID(cctx, identity.DID(plcDID("c"))); err == nil {
			t.Error("cancelled wait succeeded")
		}
	})
}

func TestLimitedResolverOffIsTheInner(t *testing.T) {
	t.Parallel()
	inner := &nopResolver{}
	if r := newLimitedResolver(inner, 0); r != identity.Resolver(inner) {
		t.Fatal("a zero rate should not wrap")
	}
}
