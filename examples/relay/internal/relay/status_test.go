package relay

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
)

type failingLights struct{}

func (failingLights) Lights(context.Context) ([]driver.BreakerLight, error) {
	return nil, errors.New("redis down")
}

// TestReportBreakers: the report's breaker rows are the store's lights at
// the report's clock, open first, then probing, then closed with failures.
func TestReportBreakers(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	rule := driver.BreakerRule{Threshold: 2, CoolOff: time.Minute}
	mb := &deliver.MemoryBreakerStore{}
	record := func(light string, at time.Time, n int) {
		for range n {
			if err := mb.Record(context.Background(), light, false, false, at, rule); err != nil {
				t.Fatal(err)
			}
		}
	}
	record("a.example", now, 1)                     // failing, under the threshold
	record("b.example", now.Add(-2*time.Minute), 2) // opened, cool-off over
	record("c.example", now, 2)                     // opened just now
	f := newFixture(t, func(c *Config) {
		c.Breakers, c.BreakerStore = MemoryLights{mb}, "memory"
		c.Now = func() time.Time { return now }
	})
	rep := f.r.Report(context.Background())
	want := []struct {
		light, state string
		failures     int
		openUntil    time.Time
	}{
		{"c.example", BreakerOpen, 0, now.Add(time.Minute)},
		{"b.example", BreakerProbing, 0, now.Add(-time.Minute)},
		{"a.example", BreakerClosed, 1, time.Time{}},
	}
	if rep.BreakerStore != "memory" || len(rep.Breakers) != len(want) {
		t.Fatalf("breakers from %q = %+v; want %d rows", rep.BreakerStore, rep.Breakers, len(want))
	}
	for i, w := range want {
		b := rep.Breakers[i]
		if b.Light != w.light || b.State != w.state || b.Failures != w.failures || !b.OpenUntil.Equal(w.openUntil) {
			t.Errorf("row %d = %+v; want %s %s, %d failures, open until %v", i, b, w.light, w.state, w.failures, w.openUntil)
		}
	}
}

func TestReportBreakerStoreFails(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Breakers, c.BreakerStore = failingLights{}, "redis" })
	rep := f.r.Report(context.Background())
	if len(rep.Breakers) != 0 || len(rep.Errors) != 1 || rep.Errors[0] != "breakers: store unavailable" {
		t.Fatalf("breakers %+v, errors %q; want none and the store noted unavailable", rep.Breakers, rep.Errors)
	}
}
