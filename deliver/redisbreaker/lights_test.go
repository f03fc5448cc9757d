package redisbreaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/redisbreaker"
	"github.com/fedkit/fedkit/internal/redistest"
)

// Light reads each stage of a light's life as Admit and Record leave it.
func TestLight(t *testing.T) {
	c, prefix := redistest.Client(t)
	s := redisbreaker.New(c, &redisbreaker.Config{KeyPrefix: prefix})
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	light := func(name string) driver.BreakerLight {
		t.Helper()
		l, err := s.Light(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}

	if l := light("b.example"); l != (driver.BreakerLight{Name: "b.example"}) || l.Color(now) != driver.LightGreen {
		t.Fatalf("unknown light: %+v, want green and empty", l)
	}
	if err := s.Record(ctx, "b.example", false, false, now, rule); err != nil {
		t.Fatal(err)
	}
	if l := light("b.example"); l.Failures != 1 || !l.LastFailure.Equal(now) || l.Color(now) != driver.LightGreen {
		t.Fatalf("one failure: %+v", l)
	}
	open(t, s, "b.example", now)
	l := light("b.example")
	if !l.OpenUntil.Equal(now.Add(rule.CoolOff)) || l.Failures != 0 || l.Color(now) != driver.LightRed {
		t.Fatalf("opened: %+v, want red until the cool-off ends", l)
	}
	probeAt := now.Add(rule.CoolOff)
	if adm, err := s.Admit(ctx, "b.example", probeAt, rule); err != nil || !adm.Probe {
		t.Fatalf("Admit after the cool-off: %+v, %v", adm, err)
	}
	if l := light("b.example"); !l.ProbeStarted.Equal(probeAt) || l.Color(probeAt) != driver.LightYellow {
		t.Fatalf("probing: %+v, want yellow with the probe's start", l)
	}
	if err := s.Record(ctx, "b.example", true, true, probeAt, rule); err != nil {
		t.Fatal(err)
	}
	if l := light("b.example"); l != (driver.BreakerLight{Name: "b.example"}) {
		t.Fatalf("closed by its probe: %+v, want nothing stored", l)
	}
}

// Lights lists the troubled lights under this store's prefix only, even
// when another prefix is a glob that would match it.
func TestLights(t *testing.T) {
	c, prefix := redistest.Client(t)
	s := redisbreaker.New(c, &redisbreaker.Config{KeyPrefix: prefix + "a*"})
	// Unquoted, "a*" in s's MATCH pattern would take in this store's keys.
	neighbour := redisbreaker.New(c, &redisbreaker.Config{KeyPrefix: prefix + "ab"})
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	open(t, s, "https://c.example/inbox", now)
	if err := s.Record(ctx, "b.example", false, false, now, rule); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(ctx, "healthy.example", false, true, now, rule); err != nil {
		t.Fatal(err)
	}
	open(t, neighbour, "d.example", now)
	// More lights than one SCAN page holds.
	for i := range 600 {
		if err := s.Record(ctx, "many.example/"+string(rune('a'+i%26))+time.Duration(i).String(), false, false, now, rule); err != nil {
			t.Fatal(err)
		}
	}

	ls, err := s.Lights(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 602 {
		t.Fatalf("Lights returned %d, want 602 (600 + b.example + c.example)", len(ls))
	}
	if ls[0].Name != "b.example" || ls[0].Failures != 1 || ls[1].Name != "https://c.example/inbox" || ls[1].Color(now) != driver.LightRed {
		t.Fatalf("first lights %+v %+v, want b.example with one failure, then c.example's inbox red", ls[0], ls[1])
	}
	for _, l := range ls {
		if l.Name == "d.example" || l.Name == "healthy.example" {
			t.Fatalf("Lights listed %q", l.Name)
		}
	}
}
