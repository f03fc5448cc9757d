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
