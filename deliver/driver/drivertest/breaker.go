package drivertest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/internal/suite"
)

// TestBreakerStore runs the conformance suite every driver.BreakerStore must
// pass: the rules documented on the interface. newStore returns an empty store
// for each subtest; it may be called from parallel subtests.
func TestBreakerStore(t testing.TB, newStore func(t testing.TB) driver.BreakerStore) {
	t.Helper()
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	rule := driver.BreakerRule{Threshold: 3, CoolOff: time.Minute}
	ctx := context.Background()
	const light = "b.example"

	admit := func(t testing.TB, s driver.BreakerStore, light string, now time.Time) driver.Admission {
		t.Helper()
		a, err := s.Admit(ctx, light, now, rule)
		if err != nil {
			t.Fatalf("Admit: %v", err)
		}
		return a
	}
	record := func(t testing.TB, s driver.BreakerStore, light string, probe, ok bool, now time.Time) {
		t.Helper()
		if err := s.Record(ctx, light, probe, ok, now, rule); err != nil {
			t.Fatalf("Record: %v", err)
		}
	}
	fail := func(t testing.TB, s driver.BreakerStore, light string, n int, now time.Time) {
		t.Helper()
		for range n {
			if a := admit(t, s, light, now); !a.Allow || a.Probe {
				t.Fatalf("closed breaker answered %+v", a)
			}
			record(t, s, light, false, false, now)
		}
	}
	open := func(t testing.TB, s driver.BreakerStore, now time.Time) {
		t.Helper()
		fail(t, s, light, rule.Threshold, now)
	}

	suite.Run(t, "ClosedAdmits", true, func(t testing.TB) {
		s := newStore(t)
		if a := admit(t, s, light, t0); !a.Allow || a.Probe {
			t.Fatalf("fresh light: %+v, want allowed, not a probe", a)
		}
	})

	suite.Run(t, "OpensAfterThresholdFailuresInARow", true, func(t testing.TB) {
		s := newStore(t)
		fail(t, s, light, rule.Threshold-1, t0)
		if a := admit(t, s, light, t0); !a.Allow {
			t.Fatalf("opened after %d failures, want %d", rule.Threshold-1, rule.Threshold)
		}
		record(t, s, light, false, false, t0)
		a := admit(t, s, light, t0.Add(time.Second))
		if a.Allow || !a.Until.Equal(t0.Add(rule.CoolOff)) {
			t.Fatalf("after %d failures: %+v, want held until %v", rule.Threshold, a, t0.Add(rule.CoolOff))
		}
	})

	suite.Run(t, "SuccessResetsCount", true, func(t testing.TB) {
		s := newStore(t)
		fail(t, s, light, rule.Threshold-1, t0)
		admit(t, s, light, t0)
		record(t, s, light, false, true, t0)
		fail(t, s, light, rule.Threshold-1, t0)
		if a := admit(t, s, light, t0); !a.Allow || a.Probe {
			t.Fatalf("failures not consecutive, yet %+v", a)
		}
	})

	suite.Run(t, "HeldUntilCoolOffThenProbe", true, func(t testing.TB) {
		s := newStore(t)
		open(t, s, t0)
		if a := admit(t, s, light, t0.Add(rule.CoolOff-time.Millisecond)); a.Allow {
			t.Fatalf("admitted before the cool-off ended: %+v", a)
		}
		if a := admit(t, s, light, t0.Add(rule.CoolOff)); !a.Allow || !a.Probe {
			t.Fatalf("after the cool-off: %+v, want a probe", a)
		}
	})

	suite.Run(t, "OneProbeAtATime", true, func(t testing.TB) {
		s := newStore(t)
		open(t, s, t0)
		now := t0.Add(rule.CoolOff)
		if a := admit(t, s, light, now); !a.Probe {
			t.Fatalf("first after cool-off: %+v, want a probe", a)
		}
		a := admit(t, s, light, now.Add(time.Second))
		if a.Allow || a.Until.IsZero() {
			t.Fatalf("second while the probe is out: %+v, want held with Until", a)
		}
	})

	suite.Run(t, "ConcurrentAdmitsYieldOneProbe", true, func(t testing.TB) {
		s := newStore(t)
		open(t, s, t0)
		now := t0.Add(rule.CoolOff)
		var probes, allowed atomic.Int32
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				a, err := s.Admit(ctx, light, now, rule)
				if err != nil {
					t.Error(err)
					return
				}
				if a.Allow {
					allowed.Add(1)
				}
				if a.Probe {
					probes.Add(1)
				}
			})
		}
		wg.Wait()
		if probes.Load() != 1 || allowed.Load() != 1 {
			t.Fatalf("%d probes, %d allowed; want exactly 1", probes.Load(), allowed.Load())
		}
	})

	suite.Run(t, "ProbeSuccessCloses", true, func(t testing.TB) {
		s := newStore(t)
		open(t, s, t0)
		now := t0.Add(rule.CoolOff)
		admit(t, s, light, now)
		record(t, s, light, true, true, now)
		for range rule.Threshold - 1 {
			if a := admit(t, s, light, now); !a.Allow || a.Probe {
				t.Fatalf("after a good probe: %+v, want closed", a)
			}
			record(t, s, light, false, false, now)
		}
		if a := admit(t, s, light, now); !a.Allow {
			t.Fatalf("closing did not reset the failure count: %+v", a)
		}
	})

	suite.Run(t, "ProbeFailureReopens", true, func(t testing.TB) {
		s := newStore(t)
		open(t, s, t0)
		now := t0.Add(rule.CoolOff + 5*time.Second)
		admit(t, s, light, now)
		record(t, s, light, true, false, now)
		a := admit(t, s, light, now.Add(time.Second))
		if a.Allow || !a.Until.Equal(now.Add(rule.CoolOff)) {
			t.Fatalf("after a failed probe: %+v, want held until %v", a, now.Add(rule.CoolOff))
		}
		if a := admit(t, s, light, now.Add(rule.CoolOff)); !a.Probe {
			t.Fatalf("after the second cool-off: %+v, want a probe", a)
		}
	})

	suite.Run(t, "LostProbeReplacedAfterCoolOff", true, func(t testing.TB) {
		s := newStore(t)
		open(t, s, t0)
		now := t0.Add(rule.CoolOff)
		admit(t, s, light, now) // the probe's process dies; no Record
		if a := admit(t, s, light, now.Add(rule.CoolOff)); !a.Probe {
			t.Fatalf("lost probe never replaced: %+v", a)
		}
	})

	// A probe lost past its time is replaced; the replacement succeeds and
	// closes the light; then the lost one reports a failure. The destination
	// was just proven healthy, so the late outcome changes nothing.
	suite.Run(t, "StaleProbeIgnoredWhenClosed", true, func(t testing.TB) {
		s := newStore(t)
		open(t, s, t0)
		lost := t0.Add(rule.CoolOff)
		replaced := lost.Add(rule.CoolOff)
		for _, at := range []time.Time{lost, replaced} {
			if a := admit(t, s, light, at); !a.Probe {
				t.Fatalf("Admit at %v: %+v, want a probe", at, a)
			}
		}
		record(t, s, light, true, true, replaced)
		record(t, s, light, true, false, replaced.Add(time.Second))
		now := replaced.Add(2 * time.Second)
		if a := admit(t, s, light, now); !a.Allow || a.Probe {
			t.Fatalf("after the lost probe's late failure: %+v, want closed", a)
		}
		// Nor did it count as a failure in a row.
		fail(t, s, light, rule.Threshold-1, now)
		if a := admit(t, s, light, now); !a.Allow || a.Probe {
			t.Fatalf("the late probe failure was counted: %+v", a)
		}
	})

	suite.Run(t, "NonProbeOutcomesIgnoredWhileOpen", true, func(t testing.TB) {
		s := newStore(t)
		open(t, s, t0)
		record(t, s, light, false, true, t0.Add(time.Second)) // a late success from before it opened
		if a := admit(t, s, light, t0.Add(2*time.Second)); a.Allow {
			t.Fatalf("a non-probe success closed an open breaker: %+v", a)
		}
		record(t, s, light, false, false, t0.Add(30*time.Second))
		if a := admit(t, s, light, t0.Add(rule.CoolOff)); !a.Probe {
			t.Fatalf("a non-probe failure extended the cool-off: %+v", a)
		}
	})

	suite.Run(t, "LightsIndependent", true, func(t testing.TB) {
		s := newStore(t)
		open(t, s, t0)
		if a := admit(t, s, "c.example", t0); !a.Allow || a.Probe {
			t.Fatalf("another light: %+v, want closed", a)
		}
		if a := admit(t, s, "https://b.example/inbox", t0); !a.Allow {
			t.Fatalf("an inbox-URL light shares a host light's state: %+v", a)
		}
	})

	// A store that counts its open lights for the breakers-open gauge
	// counts the open and the probing, not one with failures below the
	// threshold nor one closed again.
	suite.Run(t, "OpenBreakersCounted", true, func(t testing.TB) {
		s := newStore(t)
		bc, ok := s.(driver.BreakerCounter)
		if !ok {
			t.Skip("the store does not implement driver.BreakerCounter")
		}
		count := func(now time.Time) int {
			t.Helper()
			n, err := bc.OpenBreakers(ctx, now)
			if err != nil {
				t.Fatalf("OpenBreakers: %v", err)
			}
			return n
		}
		if n := count(t0); n != 0 {
			t.Fatalf("empty store: %d open; want 0", n)
		}
		open(t, s, t0)                                // b.example: open
		fail(t, s, "c.example", rule.Threshold, t0)   // c.example: open, then probing
		fail(t, s, "d.example", rule.Threshold-1, t0) // d.example: failing, still closed
		later := t0.Add(rule.CoolOff)
		if a := admit(t, s, "c.example", later); !a.Probe {
			t.Fatalf("c.example after its cool-off: %+v, want the probe", a)
		}
		if n := count(later); n != 2 {
			t.Fatalf("%d open; want 2 (one open, one probing)", n)
		}
		record(t, s, "c.example", true, true, later)
		if n := count(later); n != 1 {
			t.Fatalf("after a probe closed one: %d open; want 1", n)
		}
	})
}
