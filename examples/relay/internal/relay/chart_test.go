package relay

import (
	"testing"
	"time"
)

func TestDeliveryChart(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	minutes := make([]MinuteCount, TimelineMinutes)
	for i := range minutes {
		minutes[i] = MinuteCount{Start: t0.Add(time.Duration(i) * time.Minute)}
	}
	minutes[10] = MinuteCount{Start: minutes[10].Start, Delivered: 6, Failed: 2, Held: 4} // the tallest: 12
	minutes[59] = MinuteCount{Start: minutes[59].Start, Failed: 1}
	c := NewDeliveryChart(minutes)
	if c.Max != 12 || c.Delivered != 6 || c.Failed != 3 || c.Held != 4 {
		t.Fatalf("max %d, totals %d/%d/%d; want 12, 6/3/4", c.Max, c.Delivered, c.Failed, c.Held)
	}
	if c.From != "10:00" || c.To != "10:59" {
		t.Errorf("labels %s..%s", c.From, c.To)
	}
	if len(c.Bars) != 4 {
		t.Fatalf("%d bars; want 4 (three for 10:10, one for 10:59): %+v", len(c.Bars), c.Bars)
	}
	d, f, h, last := c.Bars[0], c.Bars[1], c.Bars[2], c.Bars[3]
	if d.Class != "delivered" || f.Class != "failed" || h.Class != "held" || d.Minute != "10:10" || last.Minute != "10:59" {
		t.Fatalf("bars %+v", c.Bars)
	}
	// Stacked upwards from the axis, heights proportional, the tallest
	// minute reaching the top of the plot.
	near := func(a, b float64) bool { return a-b < 0.2 && b-a < 0.2 }
	if !near(d.Y+d.H, c.Bottom) || !near(f.Y+f.H, d.Y) || !near(h.Y+h.H, f.Y) || !near(h.Y, c.Top) {
		t.Errorf("not stacked from %v to %v: %+v", c.Bottom, c.Top, c.Bars[:3])
	}
	if !near(d.H, 3*f.H) || !near(h.H, 2*f.H) {
		t.Errorf("heights %v %v %v; want 6:2:4", d.H, f.H, h.H)
	}
	if last.X <= h.X || last.X+last.W > c.Right || last.Title != "10:59 UTC: 1 failed" {
		t.Errorf("last bar %+v", last)
	}
	if empty := NewDeliveryChart(make([]MinuteCount, 0)); len(empty.Bars) != 0 || empty.Max != 0 {
		t.Errorf("empty chart %+v", empty)
	}
}
