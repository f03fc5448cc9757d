package origin_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fedkit/fedkit/origin"
)

// slowResolver stands in for a PLC server that never answers (every false)
// or trickles its body (every > 0: a byte per tick for 30 s, then the
// answer), honouring the context as an HTTP client does. It records the
// deadline it was given.
type slowResolver struct {
	every    time.Duration
	deadline time.Time
	hasDL    bool
}

func (s *slowResolver) ResolveFresh(ctx context.Context, did string) (origin.Resolution, error) {
	s.deadline, s.hasDL = ctx.Deadline()
	if s.every == 0 {
		<-ctx.Done()
		return origin.Resolution{}, ctx.Err()
	}
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); {
		select {
		case <-ctx.Done():
			return origin.Resolution{}, ctx.Err()
		case <-time.After(s.every):
		}
	}
	return bridged, nil
}

// TestAdmitResolveTimeout: Admit and AdmitCommunity bound the fresh
// resolution by AdmitConfig.ResolveTimeout (ResolveTimeoutDefault, 5 s, as
// identity's refresh), so a PLC server that never answers or trickles holds
// a serial lane for that long, not for the client's 10 s or 30 s. The
// deadline is read on synctest's clock, never the wall clock.
func TestAdmitResolveTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		every     time.Duration
		timeout   time.Duration
		community bool
		want      time.Duration
	}{
		{"never answers, default bound", 0, 0, false, origin.ResolveTimeoutDefault},
		{"trickles, default bound", 100 * time.Millisecond, 0, false, origin.ResolveTimeoutDefault},
		{"never answers, configured bound", 0, 2 * time.Second, false, 2 * time.Second},
		{"community never answers", 0, 0, true, origin.ResolveTimeoutDefault},
		{"community trickles", time.Second, 0, true, origin.ResolveTimeoutDefault},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sr := &slowResolver{every: tc.every}
				a, err := origin.NewAdmitter(sr, &origin.AdmitConfig{TrustedHosts: []string{"pds.tdpl.io"}, ResolveTimeout: tc.timeout})
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				var out origin.Outcome
				var reason origin.Reason
				var derr error
				if tc.community {
					d := a.AdmitCommunity(t.Context(), origin.CommunityEvent{DID: testDID, Fields: origin.CommunityFields{Origin: "lemmy.world"}, Known: true})
					out, reason, derr = d.Outcome, d.Reason, d.Err
				} else {
					d := a.Admit(t.Context(), origin.Event{DID: testDID, Fields: asserts, Known: true})
					out, reason, derr = d.Outcome, d.Reason, d.Err
				}
				if !sr.hasDL || !sr.deadline.Equal(start.Add(tc.want)) {
					t.Errorf("resolver deadline %v (set %v), want start + %v", sr.deadline.Sub(start), sr.hasDL, tc.want)
				}
				if out != origin.OutcomeRetry || reason != origin.ReasonResolveTimeout || !errors.Is(derr, context.DeadlineExceeded) {
					t.Errorf("decision %v/%s, %v; want retry/%s with DeadlineExceeded", out, reason, derr, origin.ReasonResolveTimeout)
				}
			})
		})
	}
}

// TestAdmitReportsResolution: a Decision carries the resolution it was made
// on, so an application creating a row for a new DID need not resolve it a
// second time; none when nothing was resolved.
func TestAdmitReportsResolution(t *testing.T) {
	t.Parallel()
	a, _ := origin.NewAdmitter(&fakeResolver{res: bridged}, &origin.AdmitConfig{TrustedHosts: []string{"pds.tdpl.io"}})
	d := a.Admit(context.Background(), origin.Event{DID: testDID, Fields: asserts})
	if d.Resolution == nil || *d.Resolution != bridged {
		t.Errorf("admitted: Resolution = %+v, want %+v", d.Resolution, bridged)
	}
	if d := a.Admit(context.Background(), origin.Event{DID: testDID}); d.Resolution != nil {
		t.Errorf("nothing asserted: Resolution = %+v, want nil", d.Resolution)
	}
	cd := a.AdmitCommunity(context.Background(), origin.CommunityEvent{DID: testDID, Fields: origin.CommunityFields{Origin: "lemmy.world"}})
	if cd.Resolution == nil || *cd.Resolution != bridged {
		t.Errorf("community admitted: Resolution = %+v, want %+v", cd.Resolution, bridged)
	}
	fail, _ := origin.NewAdmitter(&fakeResolver{err: errors.New("plc: 503")}, &origin.AdmitConfig{TrustedHosts: []string{"pds.tdpl.io"}})
	if d := fail.Admit(context.Background(), origin.Event{DID: testDID, Fields: asserts}); d.Resolution != nil {
		t.Errorf("failed resolution: Resolution = %+v, want nil", d.Resolution)
	}
}

func TestNewAdmitterNegativeTimeout(t *testing.T) {
	t.Parallel()
	if _, err := origin.NewAdmitter(&fakeResolver{}, &origin.AdmitConfig{ResolveTimeout: -time.Second}); err == nil {
		t.Error("negative ResolveTimeout accepted")
	}
}
