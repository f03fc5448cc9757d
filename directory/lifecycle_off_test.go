package directory_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fedkit/fedkit/directory"
)

// TestLifecycleOffSendsNothing: a status document reporting the lifecycle
// service off (lifecycle_available: false, which the Directory reports
// with lifecycle_enabled when it is switched off) stops register, sync,
// heartbeat and unregister before any signed request, with an error that
// says why; a call with an explicit version does not read the status and
// meets the Directory's 503 lifecycle_unavailable instead.
func TestLifecycleOffSendsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		call func(*directory.Client, string) (*directory.Result, error)
	}{
		{"register", func(c *directory.Client, o string) (*directory.Result, error) { return c.Register(ctx, o, nil) }},
		{"sync", func(c *directory.Client, o string) (*directory.Result, error) { return c.Sync(ctx, o, nil) }},
		{"heartbeat", func(c *directory.Client, o string) (*directory.Result, error) { return c.Heartbeat(ctx, o, nil) }},
		{"unregister", func(c *directory.Client, o string) (*directory.Result, error) { return c.Unregister(ctx, o, nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil, nil)
			b.d.SetLifecycleAvailable(false)
			_, err := tc.call(b.c, b.d.Origin())
			var lo *directory.LifecycleOffError
			if !errors.As(err, &lo) || !errors.Is(err, directory.ErrLifecycleOff) || lo.Available {
				t.Fatalf("err = %v, want *LifecycleOffError", err)
			}
			if directory.ClassOf(err) != directory.ClassPermanent {
				t.Errorf("class %v, want permanent", directory.ClassOf(err))
			}
			if n := len(b.d.Requests()); n != 0 {
				t.Fatalf("%d signed requests sent", n)
			}
		})
	}
	t.Run("explicit version still sends", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil, nil)
		b.d.SetLifecycleAvailable(false)
		_, err := b.c.Register(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V3})
		var re *directory.ResponseError
		if !errors.As(err, &re) || re.Code != directory.CodeLifecycleUnavailable || len(b.d.Requests()) != 1 {
			t.Fatalf("err = %v, %d requests", err, len(b.d.Requests()))
		}
	})
}

// TestSchedulerLifecycleOff: the scheduler records a lifecycle-off status
// as lifecycle_unavailable, deferred to the next daily interval, and sends
// no signed request.
func TestSchedulerLifecycleOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSchedEnv(t, nil, directory.Profile{})
		e.srv.SetLifecycleAvailable(false)
		e.scheduler(nil).Tick(context.Background())
		if n := len(e.ops()); n != 0 {
			t.Fatalf("%d signed requests", n)
		}
		r := e.record()
		if r.Code != directory.CodeLifecycleUnavailable || r.Diagnostic != directory.DiagStatus || time.Until(r.RetryAt) < directory.HeartbeatInterval {
			t.Fatalf("record %+v", r)
		}
	})
}
