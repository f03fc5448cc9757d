package directory_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fedkit/fedkit/directory"
)

func TestSchedulerStartupRegistersNewRelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSchedEnv(t, nil, directory.Profile{})
		s := e.scheduler(nil)
		start := time.Now()
		s.Tick(context.Background())
		if got, want := e.ops(), []string{"v3 register"}; !slices.Equal(got, want) {
			t.Fatalf("requests = %q, want %q", got, want)
		}
		r := e.record()
		if r.State != directory.StateRegistered || !r.Registered || r.Protocol != directory.V3 || r.ProfileDigest != e.client.ProfileDigest() {
			t.Fatalf("record = %+v", r)
		}
		want := start.Add(directory.HeartbeatInterval + directory.HeartbeatJitter(schedActor, schedOrigin))
		if !r.NextHeartbeat.Equal(want) {
			t.Fatalf("NextHeartbeat = %v, want %v", r.NextHeartbeat, want)
		}
		// Nothing more is due before then.
		s.Tick(context.Background())
		if n := len(e.ops()); n != 1 {
			t.Fatalf("second tick sent %d requests in total", n)
		}
	})
}

func registered(now time.Time, digest string) directory.StateRecord {
	return directory.StateRecord{
		State: directory.StateRegistered, Registered: true, Protocol: directory.V3, ProfileDigest: digest,
		LastAttempt: now.Add(-time.Hour), LastSuccess: now.Add(-time.Hour), NextHeartbeat: now.Add(20 * time.Hour),
		Operation: directory.OpHeartbeat, Outcome: directory.OutcomeRecorded,
	}
}

func TestSchedulerStartupPulse(t *testing.T) {
	for _, tc := range []struct {
		name string
		// rec builds the persisted record given now and the current digest.
		rec  func(now time.Time, digest string) directory.StateRecord
		want []string
	}{
		{"KnownUnchangedHeartbeats", registered, []string{"v3 heartbeat"}},
		{"ProfileChangedRegisters", func(now time.Time, _ string) directory.StateRecord {
			return registered(now, "0000000000000000000000000000000000000000000000000000000000000000")
		}, []string{"v3 register"}},
		{"NeverRegisteredRegisters", func(now time.Time, _ string) directory.StateRecord {
			return directory.StateRecord{State: directory.StateConfigured}
		}, []string{"v3 register"}},
		{"RetryDeadlineHonoured", func(now time.Time, d string) directory.StateRecord {
			r := registered(now, d)
			r.State, r.RetryAt, r.Attempts = directory.StateRetrying, now.Add(10*time.Minute), 3
			return r
		}, nil},
		{"DailyDeferralHonoured", func(now time.Time, d string) directory.StateRecord {
			r := registered(now, d)
			r.State, r.RetryAt, r.Code, r.Diagnostic = directory.StateRetrying, now.Add(23*time.Hour), directory.CodeAuthenticationFailed, directory.DiagDirectory
			return r
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newSchedEnv(t, nil, directory.Profile{})
				// The Directory knows the relay, as the persisted state says.
				e.preRegister()
				e.seed(tc.rec(time.Now(), e.client.ProfileDigest()))
				e.scheduler(nil).Tick(context.Background())
				if got := e.ops()[1:]; !slices.Equal(got, tc.want) {
					t.Fatalf("requests = %q, want %q", got, tc.want)
				}
			})
		})
	}
}

func TestSchedulerAppliesFileEntriesToClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSchedEnv(t, nil, directory.Profile{})
		// The client was built while the entry was disabled; the file now
		// enables it.
		if err := e.client.SetDirectories([]directory.Entry{{Origin: schedOrigin}}); err != nil {
			t.Fatal(err)
		}
		e.scheduler(nil).Tick(context.Background())
		if got := e.ops(); !slices.Equal(got, []string{"v3 register"}) {
			t.Fatalf("requests = %q, record %+v", got, e.record())
		}
	})
}
