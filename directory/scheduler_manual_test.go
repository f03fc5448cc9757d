package directory_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fedkit/fedkit/directory"
)

// TestManualWaitsForBusyScheduler: a manual command (and unregister) takes
// the scheduler's lease, so while a scheduler holds it the command waits for
// the release instead of racing it, up to ManualLeaseWaitDefault; a
// negative Wait refuses at once. Nothing is sent while the lease is held.
func TestManualWaitsForBusyScheduler(t *testing.T) {
	type run func(e *schedEnv, lease *directory.LeaseOpts) error
	manual := func(e *schedEnv, lease *directory.LeaseOpts) error {
		_, err := directory.RunManual(context.Background(), e.lc, directory.ManualSync, schedOrigin,
			&directory.ManualOpts{Store: e.store, Relay: schedActor, Lease: lease})
		return err
	}
	unregister := func(e *schedEnv, lease *directory.LeaseOpts) error {
		_, err := directory.Unregister(context.Background(), e.lc, schedOrigin,
			&directory.UnregisterOpts{ConfigFile: e.config, Store: e.store, Lease: lease})
		return err
	}
	for _, tc := range []struct {
		name    string
		do      run
		held    time.Duration // how long the "scheduler" holds the lease
		lease   *directory.LeaseOpts
		want    error
		elapsed time.Duration
	}{
		// Released between two polls (a second apart), so the poll that
		// wins is not a tie with the release.
		{"RunManualWaitsForRelease", manual, 4500 * time.Millisecond, nil, nil, 5 * time.Second},
		{"UnregisterWaitsForRelease", unregister, 4500 * time.Millisecond, nil, nil, 5 * time.Second},
		{"RunManualGivesUp", manual, time.Hour, nil, directory.ErrLeaseHeld, directory.ManualLeaseWaitDefault},
		{"UnregisterGivesUp", unregister, time.Hour, nil, directory.ErrLeaseHeld, directory.ManualLeaseWaitDefault},
		{"RunManualNoWait", manual, 5 * time.Second, &directory.LeaseOpts{Wait: -1}, directory.ErrLeaseHeld, 0},
		{"ShorterWait", manual, time.Hour, &directory.LeaseOpts{Wait: 3 * time.Second}, directory.ErrLeaseHeld, 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newSchedEnv(t, nil, directory.Profile{})
				ctx := context.Background()
				tok, err := e.store.Acquire(ctx, schedOrigin, time.Hour)
				if err != nil {
					t.Fatal(err)
				}
				var released atomic.Bool
				e.lc.before = func(context.Context, string) error {
					if !released.Load() {
						t.Error("request sent while the scheduler held the lease")
					}
					return nil
				}
				go func() {
					time.Sleep(tc.held)
					released.Store(true)
					_ = e.store.Release(ctx, schedOrigin, tok)
				}()
				start := time.Now()
				err = tc.do(e, tc.lease)
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				// Fake time: the wait is exact, so this pins both "waited
				// for the release" and "gave up after Wait".
				if got := time.Since(start); got != tc.elapsed {
					t.Fatalf("returned after %v, want %v", got, tc.elapsed)
				}
				if tc.want != nil && len(e.ops()) != 0 {
					t.Fatalf("sent %q", e.ops())
				}
				time.Sleep(tc.held) // let the holder finish
				synctest.Wait()
			})
		})
	}
}

// TestManualSuccessMovesSchedulerSlot: a manual heartbeat under the lease
// records its success, so the scheduler's next slot moves a day past it and
// the scheduler does not repeat the heartbeat at its old slot.
func TestManualSuccessMovesSchedulerSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSchedEnv(t, nil, directory.Profile{})
		ctx := context.Background()
		s := e.scheduler(nil)
		s.Tick(ctx) // startup pulse: registers
		old := e.record().NextHeartbeat
		time.Sleep(23 * time.Hour)
		res, err := directory.RunManual(ctx, e.lc, directory.ManualHeartbeat, schedOrigin,
			&directory.ManualOpts{Store: e.store, Relay: schedActor})
		if err != nil || res.Operation != directory.OpHeartbeat {
			t.Fatal(res, err)
		}
		r := e.record()
		if want := time.Now().Add(directory.HeartbeatInterval); r.NextHeartbeat.Before(want) || !r.LastSuccess.Equal(time.Now()) {
			t.Fatalf("record after manual heartbeat: %+v", r)
		}
		time.Sleep(time.Until(old) + time.Minute) // past the old slot
		if next := s.Tick(ctx); !next.After(time.Now()) {
			t.Fatalf("next deadline %v is not in the future", next)
		}
		if got := e.ops(); len(got) != 2 || got[1] != "v3 heartbeat" {
			t.Fatalf("requests = %q, want register then the manual heartbeat only", got)
		}
	})
}
