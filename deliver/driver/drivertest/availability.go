package drivertest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/internal/suite"
)

// TestAvailabilityStore runs the conformance suite every
// driver.AvailabilityStore must pass: a host becomes unavailable on the
// rule's Days-th distinct failure day (UTC, by the caller's clock), not
// before and not on more failures within one day; SeenAlive clears it;
// ListUnavailable lists unavailable hosts only, oldest first; concurrent
// failures of one host, as several processes record them, count each day
// once. It runs with caller clocks in 2019 and 2031, years from the
// server's: a store must judge by the caller's time only. newStore returns
// an empty store for each subtest.
func TestAvailabilityStore(t testing.TB, newStore func(t testing.TB) driver.AvailabilityStore) {
	t.Helper()
	ctx := context.Background()
	rule := driver.AvailabilityRule{Days: 3}
	day := 24 * time.Hour
	for _, tc := range []struct {
		name string
		t0   time.Time
	}{
		{"2019", time.Date(2019, 3, 1, 23, 30, 0, 0, time.UTC)},
		{"2031", time.Date(2031, 7, 1, 0, 15, 0, 0, time.UTC)},
	} {
		suite.Run(t, "DistinctDays"+tc.name, false, func(t testing.TB) {
			s := newStore(t)
			fail := func(at time.Time) (time.Time, bool) {
				t.Helper()
				since, down, err := s.Failure(ctx, "h.example", at, rule)
				if err != nil {
					t.Fatal(err)
				}
				return since, down
			}
			// Many failures on two days are two days.
			for i := range 5 {
				if _, down := fail(tc.t0.Add(time.Duration(i) * time.Minute)); down {
					t.Fatal("unavailable after one day")
				}
			}
			if _, down := fail(tc.t0.Add(day)); down {
				t.Fatal("unavailable after two days")
			}
			if _, down, _ := s.Unavailable(ctx, "h.example"); down {
				t.Fatal("Unavailable after two days")
			}
			third := tc.t0.Add(2 * day)
			since, down := fail(third)
			if !down || !since.Equal(third) {
				t.Fatalf("after three days: %v since %v; want unavailable since %v", down, since, third)
			}
			if since, down, err := s.Unavailable(ctx, "h.example"); err != nil || !down || !since.Equal(third) {
				t.Fatalf("Unavailable = %v, %v, %v", since, down, err)
			}
			// Later failures keep the first time.
			if since, _ := fail(third.Add(day)); !since.Equal(third) {
				t.Fatalf("since moved to %v", since)
			}
			if _, down, _ := s.Unavailable(ctx, "other.example"); down {
				t.Fatal("another host unavailable")
			}
			if err := s.SeenAlive(ctx, "h.example"); err != nil {
				t.Fatal(err)
			}
			if _, down, _ := s.Unavailable(ctx, "h.example"); down {
				t.Fatal("unavailable after SeenAlive")
			}
			// Seen alive starts the count afresh.
			if _, down := fail(third.Add(2 * day)); down {
				t.Fatal("unavailable on the first failure after SeenAlive")
			}
		})
	}
	suite.Run(t, "SuccessBetweenResets", false, func(t testing.TB) {
		s := newStore(t)
		t0 := time.Date(2031, 1, 1, 12, 0, 0, 0, time.UTC)
		for i := range 2 {
			if _, _, err := s.Failure(ctx, "h.example", t0.Add(time.Duration(i)*day), rule); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SeenAlive(ctx, "h.example"); err != nil {
			t.Fatal(err)
		}
		if _, down, _ := s.Failure(ctx, "h.example", t0.Add(2*day), rule); down {
			t.Fatal("a success between did not reset the days")
		}
	})
	suite.Run(t, "List", false, func(t testing.TB) {
		s := newStore(t)
		t0 := time.Date(2019, 1, 1, 12, 0, 0, 0, time.UTC)
		for i, h := range []string{"b.example", "a.example", "c.example"} {
			for d := range rule.Days {
				if _, _, err := s.Failure(ctx, h, t0.Add(time.Duration(d)*day+time.Duration(i)*time.Hour), rule); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, _, err := s.Failure(ctx, "up.example", t0, rule); err != nil {
			t.Fatal(err)
		}
		got, err := s.ListUnavailable(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"b.example", "a.example", "c.example"}
		if len(got) != len(want) {
			t.Fatalf("listed %+v, want %v", got, want)
		}
		for i, u := range got {
			if u.Host != want[i] || !u.Since.Equal(t0.Add(2*day+time.Duration(i)*time.Hour)) {
				t.Fatalf("listed %+v, want %v in that order, since the third day", got, want)
			}
		}
	})
	suite.Run(t, "ConcurrentSameDay", false, func(t testing.TB) {
		s := newStore(t)
		t0 := time.Date(2031, 1, 1, 12, 0, 0, 0, time.UTC)
		for d := range rule.Days - 1 {
			var wg sync.WaitGroup
			errs := make(chan error, 16)
			for range 16 {
				wg.Go(func() {
					if _, down, err := s.Failure(ctx, "h.example", t0.Add(time.Duration(d)*day), rule); err != nil || down {
						errs <- fmt.Errorf("day %d: down=%v err=%v", d, down, err)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		}
		if _, down, _ := s.Failure(ctx, "h.example", t0.Add(time.Duration(rule.Days-1)*day), rule); !down {
			t.Fatal("not unavailable on the last day")
		}
	})
}
