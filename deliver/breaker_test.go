package deliver_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
)

// Light and Lights read back what Admit and Record stored, with the meaning
// of redisbreaker's: failures in a row while closed, reset on opening; the
// cool-off's end; when the probe was admitted; closed lights forgotten.
func TestMemoryBreakerStoreLights(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	rule := driver.BreakerRule{Threshold: 3, CoolOff: time.Minute}
	s := &deliver.MemoryBreakerStore{}
	record := func(light string, probe, ok bool, now time.Time) {
		t.Helper()
		if err := s.Record(ctx, light, probe, ok, now, rule); err != nil {
			t.Fatal(err)
		}
	}
	light, lights := s.Light, s.Lights

	if got := light("b.example"); got != (driver.BreakerLight{Name: "b.example"}) {
		t.Fatalf("untouched light: %+v, want closed with nothing stored", got)
	}
	if got := lights(); len(got) != 0 {
		t.Fatalf("fresh store: Lights = %+v, want none", got)
	}

	for i := range rule.Threshold {
		record("b.example", false, false, t0.Add(time.Duration(i)*time.Second))
	}
	opened := t0.Add(time.Duration(rule.Threshold-1) * time.Second)
	record("c.example", false, false, t0)
	record("ok.example", false, false, t0)
	record("ok.example", false, true, t0.Add(time.Second))

	want := []driver.BreakerLight{
		{Name: "b.example", LastFailure: opened, OpenUntil: opened.Add(rule.CoolOff)},
		{Name: "c.example", Failures: 1, LastFailure: t0},
	}
	if got := lights(); !slices.Equal(got, want) {
		t.Fatalf("Lights = %+v, want %+v", got, want)
	}

	probeAt := opened.Add(rule.CoolOff)
	if a, err := s.Admit(ctx, "b.example", probeAt, rule); err != nil || !a.Probe {
		t.Fatalf("Admit after the cool-off: %+v, %v; want a probe", a, err)
	}
	if got := light("b.example"); !got.ProbeStarted.Equal(probeAt) {
		t.Fatalf("probe out: %+v, want ProbeStarted %v", got, probeAt)
	}
	failedAt := probeAt.Add(time.Second)
	record("b.example", true, false, failedAt)
	want0 := driver.BreakerLight{Name: "b.example", LastFailure: failedAt, OpenUntil: failedAt.Add(rule.CoolOff)}
	if got := light("b.example"); got != want0 {
		t.Fatalf("after a failed probe: %+v, want %+v", got, want0)
	}

	if _, err := s.Admit(ctx, "b.example", failedAt.Add(rule.CoolOff), rule); err != nil {
		t.Fatal(err)
	}
	record("b.example", true, true, failedAt.Add(rule.CoolOff))
	if got := light("b.example"); got != (driver.BreakerLight{Name: "b.example"}) {
		t.Fatalf("after a good probe: %+v, want closed with nothing stored", got)
	}
	if got := lights(); len(got) != 1 || got[0].Name != "c.example" {
		t.Fatalf("Lights = %+v, want only c.example", got)
	}
}
