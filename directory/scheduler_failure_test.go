package directory_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/directorytest"
)

// ceil rounds up to a whole second, as persisted deadlines are.
func ceil(t time.Time) time.Time {
	tr := t.Truncate(time.Second)
	if tr.Before(t) {
		tr = tr.Add(time.Second)
	}
	return tr
}

func TestSchedulerBackoffPersisted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSchedEnv(t, nil, directory.Profile{})
		s := e.scheduler(nil)
		ctx := context.Background()
		for n := 1; n <= 7; n++ {
			e.srv.Enqueue(directorytest.Reply{StatusCode: 500, Code: directory.CodeInternalError})
			before := len(e.ops())
			s.Tick(ctx)
			if got := len(e.ops()) - before; got != 1 {
				t.Fatalf("attempt %d: %d requests, want exactly 1", n, got)
			}
			r := e.record()
			want := ceil(time.Now().Add(directory.RetryBackoff(schedActor, schedOrigin, n)))
			if r.Attempts != n || r.State != directory.StateRetrying || !r.RetryAt.Equal(want) ||
				r.Code != directory.CodeInternalError || r.Diagnostic != directory.DiagDirectory {
				t.Fatalf("attempt %d: record %+v, want RetryAt %v", n, r, want)
			}
			if d := time.Until(r.RetryAt); d > directory.BackoffCap+time.Second {
				t.Fatalf("attempt %d: local delay %v over the cap", n, d)
			}
			// Nothing is sent before the deadline...
			time.Sleep(time.Until(r.RetryAt) - time.Second)
			s.Tick(ctx)
			if got := len(e.ops()) - before; got != 1 {
				t.Fatalf("attempt %d: retried %d times before its deadline", n, got-1)
			}
			time.Sleep(time.Second)
		}
		// ...and success resets the counter.
		s.Tick(ctx)
		if r := e.record(); r.Attempts != 0 || r.State != directory.StateRegistered || !r.RetryAt.IsZero() {
			t.Fatalf("after success: %+v", r)
		}
	})
}

func TestSchedulerRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply directorytest.Reply
		want  time.Duration // from completion
	}{
		{"RateLimited25hCappedAt24h", directorytest.Reply{StatusCode: 429, Code: directory.CodeRateLimited, RetryAfter: "90000"}, 24 * time.Hour},
		{"Unavailable2h", directorytest.Reply{StatusCode: 503, Code: directory.CodeInternalError, RetryAfter: "7200"}, 2 * time.Hour},
		{"ShortRetryAfterLosesToLocal", directorytest.Reply{StatusCode: 429, Code: directory.CodeRateLimited, RetryAfter: "3"}, directory.RetryBackoff(schedActor, schedOrigin, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newSchedEnv(t, nil, directory.Profile{})
				e.srv.Enqueue(tc.reply)
				e.scheduler(nil).Tick(context.Background())
				r := e.record()
				if want := ceil(time.Now().Add(tc.want)); !r.RetryAt.Equal(want) {
					t.Fatalf("RetryAt = %v, want %v", r.RetryAt, want)
				}
			})
		})
	}
}

func TestSchedulerNonRetryableDeferredADay(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply directorytest.Reply
		prep  func(e *schedEnv)
		code  directory.ErrorCode
	}{
		{"Authentication", directorytest.Reply{StatusCode: 401, Code: directory.CodeAuthenticationFailed}, nil, directory.CodeAuthenticationFailed},
		{"Suspended", directorytest.Reply{StatusCode: 403, Code: directory.CodeRelaySuspended}, nil, directory.CodeRelaySuspended},
		{"Lifecycle", directorytest.Reply{StatusCode: 503, Code: directory.CodeLifecycleUnavailable, RetryAfter: "5"}, nil, directory.CodeLifecycleUnavailable},
		{"Enrollment", directorytest.Reply{}, func(e *schedEnv) { e.srv.SetEnrollment(false) }, directory.CodeEnrollmentClosed},
		{"Replay", directorytest.Reply{StatusCode: 409, Code: directory.CodeReplayDetected}, nil, directory.CodeReplayDetected},
		// A code sent with the wrong status is a malformed response: no
		// code is recorded, only the diagnostic.
		{"Malformed", directorytest.Reply{StatusCode: 400, Code: directory.CodeRelayNotRegistered}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newSchedEnv(t, nil, directory.Profile{})
				if tc.prep != nil {
					tc.prep(e)
				} else {
					e.srv.Enqueue(tc.reply)
				}
				s := e.scheduler(nil)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				done := make(chan struct{})
				go func() { s.Run(ctx); close(done) }()
				synctest.Wait()
				r := e.record()
				want := ceil(time.Now().Add(directory.HeartbeatInterval + directory.HeartbeatJitter(schedActor, schedOrigin)))
				wantDiag := directory.DiagDirectory
				if tc.code == "" {
					wantDiag = directory.DiagInvalidResponse
				}
				if r.Code != tc.code || r.Diagnostic != wantDiag || r.State != directory.StateRetrying || !r.RetryAt.Equal(want) {
					t.Fatalf("record %+v, want code %s retry at %v", r, tc.code, want)
				}
				// Over the next day the scheduler keeps waking but sends nothing.
				time.Sleep(time.Until(r.RetryAt) - time.Minute)
				synctest.Wait()
				if n := len(e.ops()); n != 1 {
					t.Fatalf("%d requests before the daily interval, want 1", n)
				}
				if tc.prep != nil {
					e.srv.SetEnrollment(true)
				}
				time.Sleep(2 * time.Minute)
				synctest.Wait()
				if got := e.ops(); len(got) != 2 || got[1] != "v3 register" {
					t.Fatalf("requests after a day = %q", got)
				}
				cancel()
				<-done
			})
		})
	}
}

func TestSchedulerRelayNotRegistered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSchedEnv(t, nil, directory.Profile{})
		s := e.scheduler(nil)
		ctx := context.Background()
		s.Tick(ctx) // startup: register
		e.srv.Forget(schedActor)
		time.Sleep(time.Until(e.record().NextHeartbeat))
		s.Tick(ctx)
		if got, want := e.ops(), []string{"v3 register", "v3 heartbeat", "v3 register", "v3 heartbeat"}; !slices.Equal(got, want) {
			t.Fatalf("requests = %q, want %q", got, want)
		}
		if r := e.record(); r.State != directory.StateRegistered || r.Attempts != 0 {
			t.Fatalf("record %+v", r)
		}
		// Any other heartbeat failure never registers.
		e.srv.Enqueue(directorytest.Reply{StatusCode: 400, Code: directory.CodeInvalidRequest})
		time.Sleep(time.Until(e.record().NextHeartbeat))
		s.Tick(ctx)
		if got := e.ops(); len(got) != 5 || got[4] != "v3 heartbeat" {
			t.Fatalf("requests = %q", got)
		}
	})
}

func TestSchedulerProtocolUpgrade(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSchedEnv(t, nil, directory.Profile{})
		e.srv.SetVersions(directory.V1)
		s := e.scheduler(nil)
		ctx := context.Background()
		s.Tick(ctx)
		if r := e.record(); r.Protocol != directory.V1 {
			t.Fatalf("protocol %v, want v1 fallback", r.Protocol)
		}
		e.srv.SetVersions(directory.V1, directory.V2, directory.V3)
		time.Sleep(time.Until(e.record().NextHeartbeat))
		s.Tick(ctx)
		if got, want := e.ops(), []string{"v1 register", "v3 heartbeat", "v3 register"}; !slices.Equal(got, want) {
			t.Fatalf("requests = %q, want %q", got, want)
		}
		if r := e.record(); r.Protocol != directory.V3 {
			t.Fatalf("protocol %v, want v3", r.Protocol)
		}
		// Once synchronised, the next slot is a plain heartbeat.
		time.Sleep(time.Until(e.record().NextHeartbeat))
		s.Tick(ctx)
		if got := e.ops(); len(got) != 4 || got[3] != "v3 heartbeat" {
			t.Fatalf("requests = %q", got)
		}
	})
}

func TestSchedulerDigestChangeRegistersAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSchedEnv(t, nil, directory.Profile{})
		s := e.scheduler(nil)
		ctx := context.Background()
		s.Tick(ctx)
		time.Sleep(time.Hour)
		s.Tick(ctx) // nothing due
		e.lc.setDigest("1111111111111111111111111111111111111111111111111111111111111111")
		s.Tick(ctx)
		if got, want := e.ops(), []string{"v3 register", "v3 register"}; !slices.Equal(got, want) {
			t.Fatalf("requests = %q, want %q", got, want)
		}
		if r := e.record(); r.ProfileDigest == "" || !r.Registered {
			t.Fatalf("record %+v", r)
		}
	})
}

func TestSchedulerRunWakesForHeartbeatAndConfig(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSchedEnv(t, nil, directory.Profile{})
		s := e.scheduler(nil)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- s.Run(ctx) }()
		synctest.Wait()
		next := e.record().NextHeartbeat
		time.Sleep(time.Until(next) - time.Second)
		synctest.Wait()
		if n := len(e.ops()); n != 1 {
			t.Fatalf("%d requests before the heartbeat deadline", n)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got := e.ops(); len(got) != 2 || got[1] != "v3 heartbeat" {
			t.Fatalf("requests = %q, want a heartbeat at the deadline", got)
		}
		// Turning the gate off is observed within a minute and suppresses
		// traffic; so does disabling or removing the entry.
		for _, cfg := range []string{
			"DIRECTORIES:\n  - origin: https://directory.example\n    enabled: true\nDIRECTORY_SCHEDULER_ENABLED: false\n",
			"DIRECTORIES:\n  - origin: https://directory.example\n    enabled: false\nDIRECTORY_SCHEDULER_ENABLED: true\n",
			"DIRECTORY_SCHEDULER_ENABLED: true\n",
		} {
			e.writeConfig(cfg)
			time.Sleep(3 * 24 * time.Hour)
			synctest.Wait()
			if n := len(e.ops()); n != 2 {
				t.Fatalf("config %q: %d requests, want none more", cfg, n-2)
			}
			if r := e.record(); r.State != directory.StateRegistered {
				t.Fatalf("suppression recorded as a failure: %+v", r)
			}
		}
		e.writeConfig(schedYAML)
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := len(e.ops()); n != 3 {
			t.Fatalf("re-enabled entry: %d requests, want a third", n)
		}
		cancel()
		if err := <-done; err != context.Canceled {
			t.Fatalf("Run = %v", err)
		}
	})
}

func TestSchedulerEnvironmentOnlyRefused(t *testing.T) {
	e := newSchedEnv(t, nil, directory.Profile{})
	for _, tc := range []struct {
		name string
		cfg  directory.SchedulerConfig
	}{
		{"no YAML file (environment-only)", directory.SchedulerConfig{Relay: schedActor}},
		{"no relay", directory.SchedulerConfig{ConfigFile: e.config}},
		{"renewal not shorter than TTL", directory.SchedulerConfig{ConfigFile: e.config, Relay: schedActor, LeaseTTL: time.Second, LeaseRenew: time.Second}},
	} {
		if _, err := directory.NewScheduler(e.lc, e.store, &tc.cfg); !errors.Is(err, directory.ErrSchedulerConfig) {
			t.Errorf("%s: err = %v, want ErrSchedulerConfig", tc.name, err)
		}
	}
	if _, err := directory.NewScheduler(e.lc, e.store, &directory.SchedulerConfig{ConfigFile: e.config, Relay: schedActor}); err != nil {
		t.Fatalf("valid configuration refused: %v", err)
	}
}

func TestSchedulerReconcileDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSchedEnv(t, nil, directory.Profile{})
		var got time.Duration
		e.lc.before = func(ctx context.Context, op string) error {
			dl, ok := ctx.Deadline()
			if ok {
				got = time.Until(dl)
			}
			<-ctx.Done() // a Directory that never answers
			return &directory.TransportError{Timeout: true}
		}
		e.scheduler(nil).Tick(context.Background())
		if got != directory.ReconcileTimeoutDefault {
			t.Fatalf("reconciliation deadline %v, want %v", got, directory.ReconcileTimeoutDefault)
		}
		if r := e.record(); r.Diagnostic != directory.DiagTimeout || r.State != directory.StateRetrying ||
			!r.RetryAt.Equal(ceil(time.Now().Add(directory.RetryBackoff(schedActor, schedOrigin, 1)))) {
			t.Fatalf("record %+v", r)
		}
	})
}
