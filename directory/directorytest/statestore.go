package directorytest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/internal/suite"
)

// TestStateStore is the conformance suite every directory.StateStore passes.
// newStore returns an empty store isolated to t. Lease expiry is exercised
// with real sleeps of a few hundred milliseconds, so stores must honour
// sub-second TTLs; a renewal round that the machine stalls for a TTL is
// run again rather than failed.
func TestStateStore(t testing.TB, newStore func(t testing.TB) directory.StateStore) {
	const origin = "https://directory.example"
	ctx := context.Background()
	rec := directory.StateRecord{
		State:         directory.StateRegistered,
		Registered:    true,
		Protocol:      directory.V3,
		ProfileDigest: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		LastAttempt:   time.Unix(1791066600, 0).UTC(),
		LastSuccess:   time.Unix(1791066600, 0).UTC(),
		NextHeartbeat: time.Unix(1791066600+86400+3600, 0).UTC(),
		Attempts:      0,
		Operation:     directory.OpRegister,
		Outcome:       directory.OutcomeCreated,
	}

	suite.Run(t, "EmptyLoadIsZero", false, func(t testing.TB) {
		s := newStore(t)
		got, err := s.Load(ctx, origin)
		if err != nil || !got.IsZero() {
			t.Fatalf("Load = %+v, %v; want zero, nil", got, err)
		}
	})
	suite.Run(t, "SaveLoadRoundTrip", false, func(t testing.TB) {
		s := newStore(t)
		tok := acquire(t, s, origin, time.Minute)
		in := rec
		in.LastAttempt = in.LastAttempt.Add(700 * time.Millisecond) // truncated to whole seconds
		if err := s.Save(ctx, origin, tok, in); err != nil {
			t.Fatal(err)
		}
		got, err := s.Load(ctx, origin)
		if err != nil {
			t.Fatal(err)
		}
		if got != rec {
			t.Fatalf("Load = %+v\nwant   %+v", got, rec)
		}
		// A later save replaces every field, leaving none behind.
		if err := s.Save(ctx, origin, tok, directory.StateRecord{State: directory.StateRetrying, Attempts: 3, Diagnostic: directory.DiagTransport}); err != nil {
			t.Fatal(err)
		}
		got, _ = s.Load(ctx, origin)
		if want := (directory.StateRecord{State: directory.StateRetrying, Attempts: 3, Diagnostic: directory.DiagTransport}); got != want {
			t.Fatalf("after replace Load = %+v, want %+v", got, want)
		}
	})
	suite.Run(t, "OriginsAreSeparate", false, func(t testing.TB) {
		s := newStore(t)
		tok := acquire(t, s, origin, time.Minute)
		if err := s.Save(ctx, origin, tok, rec); err != nil {
			t.Fatal(err)
		}
		other := "https://other.example"
		if got, _ := s.Load(ctx, other); !got.IsZero() {
			t.Fatalf("other origin sees %+v", got)
		}
		if _, err := s.Acquire(ctx, other, time.Minute); err != nil {
			t.Fatalf("other origin lease: %v", err)
		}
	})
	suite.Run(t, "SecondAcquireRefused", false, func(t testing.TB) {
		s := newStore(t)
		acquire(t, s, origin, time.Minute)
		if _, err := s.Acquire(ctx, origin, time.Minute); !errors.Is(err, directory.ErrLeaseHeld) {
			t.Fatalf("second Acquire err = %v, want ErrLeaseHeld", err)
		}
	})
	suite.Run(t, "WrongTokenRefused", false, func(t testing.TB) {
		s := newStore(t)
		acquire(t, s, origin, time.Minute)
		for name, err := range map[string]error{
			"Renew":   s.Renew(ctx, origin, "not-the-token", time.Minute),
			"Release": s.Release(ctx, origin, "not-the-token"),
			"Save":    s.Save(ctx, origin, "not-the-token", rec),
			"SaveNo":  s.Save(ctx, origin, "", rec),
		} {
			if !errors.Is(err, directory.ErrLeaseLost) {
				t.Errorf("%s err = %v, want ErrLeaseLost", name, err)
			}
		}
		if got, _ := s.Load(ctx, origin); !got.IsZero() {
			t.Fatalf("refused save wrote %+v", got)
		}
	})
	suite.Run(t, "ReleaseThenReacquire", false, func(t testing.TB) {
		s := newStore(t)
		tok := acquire(t, s, origin, time.Minute)
		if err := s.Release(ctx, origin, tok); err != nil {
			t.Fatal(err)
		}
		if err := s.Release(ctx, origin, tok); !errors.Is(err, directory.ErrLeaseLost) {
			t.Fatalf("double Release err = %v, want ErrLeaseLost", err)
		}
		tok2 := acquire(t, s, origin, time.Minute)
		if tok2 == tok {
			t.Fatal("token reused")
		}
	})
	suite.Run(t, "FormerOwnerCannotOverwrite", false, func(t testing.TB) {
		s := newStore(t)
		old := acquire(t, s, origin, 200*time.Millisecond)
		time.Sleep(400 * time.Millisecond) // let the lease expire
		if err := s.Renew(ctx, origin, old, time.Minute); !errors.Is(err, directory.ErrLeaseLost) {
			t.Fatalf("Renew after expiry err = %v, want ErrLeaseLost", err)
		}
		tok := acquire(t, s, origin, time.Minute)
		if err := s.Save(ctx, origin, tok, rec); err != nil {
			t.Fatal(err)
		}
		stale := rec
		stale.State = directory.StateRetrying
		if err := s.Save(ctx, origin, old, stale); !errors.Is(err, directory.ErrLeaseLost) {
			t.Fatalf("former owner Save err = %v, want ErrLeaseLost", err)
		}
		if got, _ := s.Load(ctx, origin); got != rec {
			t.Fatalf("state = %+v, want the new owner's %+v", got, rec)
		}
	})
	suite.Run(t, "RenewKeepsLease", false, func(t testing.TB) {
		// Renewed every quarter of its TTL for longer than the TTL, the
		// lease must hold. A call may come late on a loaded machine, so a
		// loss is the store's fault only when less than a TTL passed
		// between sending the call before and hearing the answer to this
		// one (the store saw them closer together than that); otherwise
		// the round is judged stalled and run again.
		const ttl = time.Second
		for round := 1; ; round++ {
			if round > 5 {
				t.Fatalf("five rounds stalled: the machine is too loaded to judge a %v lease", ttl)
			}
			if renewKeepsLease(t, newStore(t), origin, ttl) {
				return
			}
		}
	})
	suite.Run(t, "InvalidRecordRefused", false, func(t testing.TB) {
		s := newStore(t)
		tok := acquire(t, s, origin, time.Minute)
		for name, r := range map[string]directory.StateRecord{
			"state":    {State: "heartbeat-current"},
			"protocol": {Protocol: 9},
			"digest":   {ProfileDigest: "ABC"},
			"outcome":  {Operation: directory.OpHeartbeat, Outcome: directory.OutcomeCreated},
			"code":     {Code: "teapot"},
			"diag":     {Diagnostic: "free text from a server"},
		} {
			if err := s.Save(ctx, origin, tok, r); !errors.Is(err, directory.ErrInvalidRecord) {
				t.Errorf("%s: Save err = %v, want ErrInvalidRecord", name, err)
			}
		}
	})
}

// renewKeepsLease is one round of RenewKeepsLease: false when it stalled.
func renewKeepsLease(t testing.TB, s directory.StateStore, origin string, ttl time.Duration) bool {
	t.Helper()
	ctx := context.Background()
	sent := time.Now()
	tok := acquire(t, s, origin, ttl)
	for range 5 {
		time.Sleep(ttl / 4)
		before := time.Now()
		err := s.Renew(ctx, origin, tok, ttl)
		if window := time.Since(sent); err != nil {
			if window >= ttl {
				return false
			}
			t.Fatalf("Renew %v after the previous call: %v", window.Round(time.Millisecond), err)
		}
		sent = before
	}
	_, err := s.Acquire(ctx, origin, time.Minute)
	if window := time.Since(sent); !errors.Is(err, directory.ErrLeaseHeld) {
		if window >= ttl {
			return false
		}
		t.Fatalf("renewed lease was taken %v after its last renewal: %v", window.Round(time.Millisecond), err)
	}
	return true
}

func acquire(t testing.TB, s directory.StateStore, origin string, ttl time.Duration) string {
	t.Helper()
	tok, err := s.Acquire(context.Background(), origin, ttl)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if len(tok) < 16 {
		t.Fatalf("token %q too short to be unguessable", tok)
	}
	return tok
}
