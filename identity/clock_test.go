package identity_test

import (
	"context"
	"testing"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
)

// TestClockSetOnce: the clock rule. A Cache or Refresher given a clock
// hands it to the resolver it wraps when the resolver has none of its
// own, so a test sets time once; a resolver's own clock stands.
func TestClockSetOnce(t *testing.T) {
	t.Parallel()
	y2031 := func() time.Time { return time.Date(2031, 3, 1, 12, 0, 0, 0, time.UTC) }
	y2019 := func() time.Time { return time.Date(2019, 3, 1, 12, 0, 0, 0, time.UTC) }
	n := identitytest.NewNetwork(t)
	n.Claim(string(didA), "alice.bridge.test", bridge)
	resolvedYear := func(r identity.Resolver) int {
		t.Helper()
		id, err := r.LookupDID(context.Background(), didA)
		if err != nil {
			t.Fatal(err)
		}
		return id.ResolvedAt.Year()
	}
	t.Run("Cache hands its clock to the resolver", func(t *testing.T) {
		c, err := identity.NewCache(n.Resolver(t), nil, &identity.CacheConfig{Now: y2031})
		if err != nil {
			t.Fatal(err)
		}
		if y := resolvedYear(c); y != 2031 {
			t.Fatalf("ResolvedAt in %d, want the Cache's 2031", y)
		}
	})
	t.Run("Refresher hands its clock to resolver and Cache", func(t *testing.T) {
		res := n.Resolver(t)
		c, err := identity.NewCache(res, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := identity.NewRefresher(res, identitytest.NewStore(), &identity.RefresherConfig{Now: y2031, Cache: c}); err != nil {
			t.Fatal(err)
		}
		if y := resolvedYear(res); y != 2031 {
			t.Fatalf("ResolvedAt in %d, want the Refresher's 2031", y)
		}
	})
	t.Run("a resolver's own clock stands", func(t *testing.T) {
		cfg := n.ResolverConfig()
		cfg.Now = y2019
		c0, err := client.New(identitytest.ClientConfig())
		if err != nil {
			t.Fatal(err)
		}
		res, err := identity.NewResolver(c0, n.DNS, cfg)
		if err != nil {
			t.Fatal(err)
		}
		c, err := identity.NewCache(res, nil, &identity.CacheConfig{Now: y2031})
		if err != nil {
			t.Fatal(err)
		}
		if y := resolvedYear(c); y != 2019 {
			t.Fatalf("ResolvedAt in %d, want the resolver's own 2019", y)
		}
	})
}
