package sig_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/fedkit/fedkit/sig"
)

// TestHostSchemes: the store deliver and fetch share. It forgets the least
// recently used host, where a read counts as a use.
func TestHostSchemes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("UnknownHost", func(t *testing.T) {
		t.Parallel()
		if _, ok, err := sig.NewHostSchemes(2).Scheme(ctx, "a.example"); ok || err != nil {
			t.Fatalf("ok=%v err=%v", ok, err)
		}
	})
	t.Run("ReadRefreshesRecency", func(t *testing.T) {
		t.Parallel()
		m := sig.NewHostSchemes(2)
		_ = m.SetScheme(ctx, "a", sig.SchemeCavage)
		_ = m.SetScheme(ctx, "b", sig.SchemeRFC9421)
		if s, ok, _ := m.Scheme(ctx, "a"); !ok || s != sig.SchemeCavage {
			t.Fatal("a forgotten")
		}
		_ = m.SetScheme(ctx, "c", sig.SchemeCavage) // b is the least recently used
		if _, ok, _ := m.Scheme(ctx, "b"); ok {
			t.Fatal("b kept beyond the bound")
		}
		for _, h := range []string{"a", "c"} {
			if _, ok, _ := m.Scheme(ctx, h); !ok {
				t.Fatalf("%s evicted instead of b", h)
			}
		}
	})
	t.Run("OverwriteKeepsOneEntry", func(t *testing.T) {
		t.Parallel()
		m := sig.NewHostSchemes(2)
		_ = m.SetScheme(ctx, "a", sig.SchemeCavage)
		_ = m.SetScheme(ctx, "b", sig.SchemeCavage)
		_ = m.SetScheme(ctx, "a", sig.SchemeRFC9421) // a is now most recent
		_ = m.SetScheme(ctx, "c", sig.SchemeCavage)
		if s, ok, _ := m.Scheme(ctx, "a"); !ok || s != sig.SchemeRFC9421 {
			t.Fatalf("a = %v, %v; want the overwrite kept", s, ok)
		}
		if m.Len() != 2 {
			t.Fatalf("Len = %d, want 2", m.Len())
		}
	})
	t.Run("DefaultBound", func(t *testing.T) {
		t.Parallel()
		for _, max := range []int{0, -1} {
			m := sig.NewHostSchemes(max)
			for i := range sig.HostSchemesMaxDefault + 1 {
				_ = m.SetScheme(ctx, fmt.Sprint(i), sig.SchemeCavage)
			}
			if m.Len() != sig.HostSchemesMaxDefault {
				t.Fatalf("NewHostSchemes(%d): Len = %d, want %d", max, m.Len(), sig.HostSchemesMaxDefault)
			}
			if _, ok, _ := m.Scheme(ctx, "0"); ok {
				t.Fatalf("NewHostSchemes(%d): the oldest host kept", max)
			}
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		t.Parallel()
		m := sig.NewHostSchemes(8)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 200 {
					h := fmt.Sprint((g + i) % 16)
					_ = m.SetScheme(ctx, h, sig.SchemeRFC9421)
					_, _, _ = m.Scheme(ctx, h)
				}
			})
		}
		wg.Wait()
		if m.Len() != 8 {
			t.Fatalf("Len = %d, want 8", m.Len())
		}
	})
}
