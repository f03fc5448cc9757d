package fetch_test

import (
	"context"
	"testing"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/delivertest"
	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/sig"
)

// TestMemorySchemeStoreShared: fetch's default store is sig.HostSchemes,
// the type deliver's is too, so one store serves a Deliverer and a Fetcher
// (a scheme learned by one is used first by the other), and it passes
// deliver's conformance suite.
func TestMemorySchemeStoreShared(t *testing.T) {
	ctx := context.Background()
	var shared *deliver.MemorySchemeStore = fetch.NewMemorySchemeStore(4)
	var _ *sig.HostSchemes = shared
	if err := shared.SetScheme(ctx, "b.example", sig.SchemeCavage); err != nil {
		t.Fatal(err)
	}
	var fs fetch.SchemeStore = shared
	if s, ok, _ := fs.Scheme(ctx, "b.example"); !ok || s != sig.SchemeCavage {
		t.Fatalf("Scheme = %v, %v; want cavage", s, ok)
	}
	delivertest.TestSchemeStore(t, func(*testing.T) deliver.SchemeStore { return fetch.NewMemorySchemeStore(0) })
}
