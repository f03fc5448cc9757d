package relay

import (
	"strconv"
	"time"
)

// Chart geometry, in SVG user units.
const (
	chartWidth  = 640
	chartHeight = 150
	chartLeft   = 40 // room for the scale
	chartTop    = 8
	chartPlot   = 112 // plot height; the time labels go below it
)

// ChartBar is one outcome's segment of one minute's stacked bar.
type ChartBar struct {
	Class      string // delivered, failed or held
	Minute     string // "15:04" UTC
	Count      int
	X, Y, W, H float64
	Title      string
}

// DeliveryChart is the status page's inline SVG chart of deliveries per
// minute: drawn on the server, so the page needs no script and no asset.
type DeliveryChart struct {
	Width, Height            int
	Left, Top, Bottom, Right float64
	Bars                     []ChartBar
	// Max is the tallest minute's total, the scale's top.
	Max                     int
	Delivered, Failed, Held int
	From, To                string
	MaxLabelY, TimeLabelY   float64
	MidX                    float64
	MidLabel                string
}

// NewDeliveryChart lays out minutes (oldest first) as stacked bars:
// delivered at the bottom, then failed, then held.
func NewDeliveryChart(minutes []MinuteCount) *DeliveryChart {
	c := &DeliveryChart{Width: chartWidth, Height: chartHeight, Left: chartLeft, Top: chartTop,
		Bottom: chartTop + chartPlot, Right: chartWidth - 4}
	c.MaxLabelY, c.TimeLabelY = chartTop+10, chartTop+chartPlot+16
	for _, m := range minutes {
		c.Max = max(c.Max, m.Total())
		c.Delivered += m.Delivered
		c.Failed += m.Failed
		c.Held += m.Held
	}
	if len(minutes) == 0 {
		return c
	}
	c.From, c.To = minutes[0].Start.Format("15:04"), minutes[len(minutes)-1].Start.Format("15:04")
	c.MidX = (c.Left + c.Right) / 2
	c.MidLabel = minutes[len(minutes)/2].Start.Format("15:04")
	slot := (c.Right - c.Left) / float64(len(minutes))
	scale := 0.0
	if c.Max > 0 {
		scale = chartPlot / float64(c.Max)
	}
	for i, m := range minutes {
		x := c.Left + float64(i)*slot + slot*0.1
		y := c.Bottom
		for _, seg := range []struct {
			class string
			n     int
		}{{"delivered", m.Delivered}, {"failed", m.Failed}, {"held", m.Held}} {
			if seg.n == 0 {
				continue
			}
			h := max(float64(seg.n)*scale, 1) // a single attempt stays visible
			y -= h
			minute := m.Start.Format("15:04")
			c.Bars = append(c.Bars, ChartBar{Class: seg.class, Minute: minute, Count: seg.n,
				X: round1(x), Y: round1(y), W: round1(slot * 0.8), H: round1(h),
				Title: minute + " UTC: " + strconv.Itoa(seg.n) + " " + seg.class})
		}
	}
	return c
}

func round1(f float64) float64 { return float64(int(f*10+0.5)) / 10 }

// PerMinute is the last hour of this process's delivery attempts, per
// minute, oldest first.
func (h *Health) PerMinute(now time.Time) []MinuteCount { return h.timeline.Last(now) }
