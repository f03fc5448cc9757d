package delivertest

import (
	"context"
	"testing"

	"github.com/fedkit/fedkit/sig"
)

// TestSchemeStore runs the conformance suite every sig.SchemeStore must
// pass. newStore returns an empty store for each subtest.
func TestSchemeStore(t *testing.T, newStore func(t *testing.T) sig.SchemeStore) {
	t.Helper()
	ctx := context.Background()
	t.Run("UnknownHost", func(t *testing.T) {
		t.Parallel()
		if _, ok, err := newStore(t).Scheme(ctx, "b.example"); ok || err != nil {
			t.Fatalf("unknown host: ok=%v err=%v", ok, err)
		}
	})
	t.Run("RemembersAndOverwrites", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		for _, want := range []sig.Scheme{sig.SchemeRFC9421, sig.SchemeCavage} {
			if err := s.SetScheme(ctx, "b.example", want); err != nil {
				t.Fatal(err)
			}
			got, ok, err := s.Scheme(ctx, "b.example")
			if !ok || err != nil || got != want {
				t.Fatalf("Scheme = %v, %v, %v; want %v", got, ok, err, want)
			}
		}
	})
	t.Run("HostsIndependent", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		if err := s.SetScheme(ctx, "b.example", sig.SchemeRFC9421); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := s.Scheme(ctx, "b.example:8443"); ok {
			t.Fatal("another port of the host shares its scheme")
		}
	})
}
