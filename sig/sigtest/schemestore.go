package sigtest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/internal/suite"
	"github.com/fedkit/fedkit/sig"
)

// TestSchemeStore checks a sig.SchemeStore: nothing is remembered of a new
// host; SetScheme and Scheme round-trip both schemes, the last one set
// winning; hosts are independent, another port of a host too. newStore
// must return an empty store each time.
func TestSchemeStore(t testing.TB, newStore func(tb testing.TB) sig.SchemeStore) {
	t.Helper()
	ctx := context.Background()
	suite.Run(t, "UnknownHost", false, func(t testing.TB) {
		if _, ok, err := newStore(t).Scheme(ctx, "b.example"); ok || err != nil {
			t.Fatalf("unknown host: ok=%v err=%v", ok, err)
		}
	})
	suite.Run(t, "RemembersAndOverwrites", false, func(t testing.TB) {
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
	suite.Run(t, "HostsIndependent", false, func(t testing.TB) {
		s := newStore(t)
		if err := s.SetScheme(ctx, "b.example", sig.SchemeRFC9421); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := s.Scheme(ctx, "b.example:8443"); ok {
			t.Fatal("another port of the host shares its scheme")
		}
	})
}

// TestLearnedSchemeStore checks a sig.LearnedSchemeStore: it passes
// TestSchemeStore; nothing is remembered of a new host; Learn and Learned
// round-trip the scheme and the time (to the millisecond, for caller clocks
// in 2019 and 2031, years from the server's); Learn replaces; SetScheme
// changes the scheme, and keeps the time learned when the scheme is the one
// remembered; hosts are independent; concurrent use is safe. newStore must
// return an empty store each time.
func TestLearnedSchemeStore(t testing.TB, newStore func(tb testing.TB) sig.LearnedSchemeStore) {
	t.Helper()
	suite.Run(t, "SchemeStore", false, func(t testing.TB) {
		TestSchemeStore(t, func(tb testing.TB) sig.SchemeStore { return newStore(tb) })
	})
	ctx := context.Background()
	learned := func(t testing.TB, s sig.LearnedSchemeStore, host string) (sig.LearnedScheme, bool) {
		t.Helper()
		l, ok, err := s.Learned(ctx, host)
		if err != nil {
			t.Fatalf("Learned(%q): %v", host, err)
		}
		return l, ok
	}
	learn := func(t testing.TB, s sig.LearnedSchemeStore, host string, l sig.LearnedScheme) {
		t.Helper()
		if err := s.Learn(ctx, host, l); err != nil {
			t.Fatalf("Learn(%q): %v", host, err)
		}
	}
	suite.Run(t, "Unknown", false, func(t testing.TB) {
		s := newStore(t)
		if _, ok := learned(t, s, "a.example"); ok {
			t.Fatal("a new store remembers a host")
		}
		if _, ok, err := s.Scheme(ctx, "a.example"); ok || err != nil {
			t.Fatalf("Scheme of a new store: %v, %v", ok, err)
		}
	})
	for _, tc := range []struct {
		name string
		now  time.Time
	}{
		{"RoundTrip2019", time.Date(2019, 3, 1, 12, 0, 0, 123e6, time.UTC)},
		{"RoundTrip2031", time.Date(2031, 7, 1, 12, 0, 0, 456e6, time.UTC)},
	} {
		suite.Run(t, tc.name, false, func(t testing.TB) {
			s := newStore(t)
			learn(t, s, "a.example", sig.LearnedScheme{Scheme: sig.SchemeCavage, Learned: tc.now})
			l, ok := learned(t, s, "a.example")
			if !ok || l.Scheme != sig.SchemeCavage || !l.Learned.Equal(tc.now) {
				t.Fatalf("Learned = %+v, %v; want cavage at %v", l, ok, tc.now)
			}
			if sc, ok, err := s.Scheme(ctx, "a.example"); !ok || err != nil || sc != sig.SchemeCavage {
				t.Fatalf("Scheme = %v, %v, %v; want cavage", sc, ok, err)
			}
			later := tc.now.Add(8 * 24 * time.Hour)
			learn(t, s, "a.example", sig.LearnedScheme{Scheme: sig.SchemeRFC9421, Learned: later})
			if l, _ := learned(t, s, "a.example"); l.Scheme != sig.SchemeRFC9421 || !l.Learned.Equal(later) {
				t.Fatalf("after a second Learn: %+v; want rfc9421 at %v", l, later)
			}
		})
	}
	suite.Run(t, "SetSchemeKeepsTimeOfSameScheme", false, func(t testing.TB) {
		s := newStore(t)
		at := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
		learn(t, s, "a.example", sig.LearnedScheme{Scheme: sig.SchemeCavage, Learned: at})
		if err := s.SetScheme(ctx, "a.example", sig.SchemeCavage); err != nil {
			t.Fatal(err)
		}
		if l, _ := learned(t, s, "a.example"); l.Scheme != sig.SchemeCavage || !l.Learned.Equal(at) {
			t.Fatalf("after SetScheme of the same scheme: %+v; want the time kept, %v", l, at)
		}
		if err := s.SetScheme(ctx, "a.example", sig.SchemeRFC9421); err != nil {
			t.Fatal(err)
		}
		if l, _ := learned(t, s, "a.example"); l.Scheme != sig.SchemeRFC9421 {
			t.Fatalf("after SetScheme of the other scheme: %+v; want rfc9421", l)
		}
		if err := s.SetScheme(ctx, "new.example", sig.SchemeRFC9421); err != nil {
			t.Fatal(err)
		}
		if l, ok := learned(t, s, "new.example"); !ok || l.Scheme != sig.SchemeRFC9421 {
			t.Fatalf("SetScheme of a new host: %+v, %v", l, ok)
		}
	})
	suite.Run(t, "HostsIndependent", false, func(t testing.TB) {
		s := newStore(t)
		at := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
		learn(t, s, "a.example", sig.LearnedScheme{Scheme: sig.SchemeCavage, Learned: at})
		learn(t, s, "a.example:8443", sig.LearnedScheme{Scheme: sig.SchemeRFC9421, Learned: at.Add(time.Hour)})
		if l, _ := learned(t, s, "a.example"); l.Scheme != sig.SchemeCavage || !l.Learned.Equal(at) {
			t.Fatalf("a.example: %+v", l)
		}
		if _, ok := learned(t, s, "b.example"); ok {
			t.Fatal("b.example remembered")
		}
	})
	suite.Run(t, "Concurrent", false, func(t testing.TB) {
		s := newStore(t)
		at := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for i := range 16 {
			wg.Go(func() {
				host := fmt.Sprintf("h%d.example", i%4)
				if err := s.Learn(ctx, host, sig.LearnedScheme{Scheme: sig.SchemeRFC9421, Learned: at}); err != nil {
					errs <- err
				}
				if _, _, err := s.Learned(ctx, host); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for i := range 4 {
			if l, ok := learned(t, s, fmt.Sprintf("h%d.example", i)); !ok || l.Scheme != sig.SchemeRFC9421 {
				t.Fatalf("h%d: %+v, %v", i, l, ok)
			}
		}
	})
}
