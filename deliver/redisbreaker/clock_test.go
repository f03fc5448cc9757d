package redisbreaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver/redisbreaker"
	"github.com/fedkit/fedkit/internal/redistest"
)

// TestCallerClockYearsAway runs a breaker through open, hold, probe and
// close with caller clocks years from the Redis server's. The scripts
// judge state by the caller's now only; the server's clock times only the
// key's retention (PEXPIRE, a duration), so neither case may lose the
// light or hold it for the wrong span.
func TestCallerClockYearsAway(t *testing.T) {
	for _, tc := range []struct {
		name string
		now  time.Time
	}{
		{"past-2019", time.Date(2019, 3, 1, 12, 0, 0, 0, time.UTC)},
		{"future-2031", time.Date(2031, 7, 1, 12, 0, 0, 0, time.UTC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, prefix := redistest.Client(t)
			s := redisbreaker.New(c, &redisbreaker.Config{KeyPrefix: prefix})
			ctx := context.Background()
			now := tc.now
			open(t, s, "h.example", now)
			if ttl := c.PTTL(ctx, s.Key("h.example")).Val(); ttl < 2*rule.CoolOff-time.Second {
				t.Fatalf("light kept for %v by the server, want at least twice the cool-off", ttl)
			}
			a, err := s.Admit(ctx, "h.example", now.Add(rule.CoolOff-time.Second), rule)
			if err != nil || a.Allow {
				t.Fatalf("inside the cool-off: %+v, %v; want held", a, err)
			}
			if !a.Until.Equal(now.Add(rule.CoolOff)) {
				t.Fatalf("held until %v, want %v", a.Until, now.Add(rule.CoolOff))
			}
			a, err = s.Admit(ctx, "h.example", now.Add(rule.CoolOff), rule)
			if err != nil || !a.Allow || !a.Probe {
				t.Fatalf("at the cool-off's end: %+v, %v; want a probe", a, err)
			}
			if err := s.Record(ctx, "h.example", true, true, now.Add(rule.CoolOff), rule); err != nil {
				t.Fatal(err)
			}
			a, err = s.Admit(ctx, "h.example", now.Add(rule.CoolOff), rule)
			if err != nil || !a.Allow || a.Probe {
				t.Fatalf("after a good probe: %+v, %v; want closed", a, err)
			}
		})
	}
}
