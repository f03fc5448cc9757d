package relay

import (
	"sync"
	"time"

	"github.com/fedkit/fedkit/deliver"
)

// TimelineMinutes is how many minutes of deliveries the status page charts.
const TimelineMinutes = 60

// MinuteCount is what this process's delivery attempts came to in one
// minute.
type MinuteCount struct {
	// Start is the minute's first instant, UTC.
	Start     time.Time `json:"start"`
	Delivered int       `json:"delivered"`
	Failed    int       `json:"failed"`
	Held      int       `json:"held"`
}

// Total sums the three outcomes.
func (m MinuteCount) Total() int { return m.Delivered + m.Failed + m.Held }

// Timeline counts delivery attempts per minute for the last
// TimelineMinutes minutes, in a fixed ring: memory does not grow with
// traffic. The zero value is ready to use.
type Timeline struct {
	mu   sync.Mutex
	ring [TimelineMinutes]MinuteCount
}

// Record counts one attempt with outcome o at t.
func (tl *Timeline) Record(t time.Time, o deliver.AttemptOutcome) {
	start := t.UTC().Truncate(time.Minute)
	tl.mu.Lock()
	defer tl.mu.Unlock()
	m := &tl.ring[start.Unix()/60%TimelineMinutes]
	if !m.Start.Equal(start) {
		if start.Before(m.Start) {
			return // older than the slot's minute: outside the window
		}
		*m = MinuteCount{Start: start}
	}
	switch o {
	case deliver.AttemptDelivered:
		m.Delivered++
	case deliver.AttemptHeld:
		m.Held++
	default:
		m.Failed++
	}
}

// Last returns the TimelineMinutes minutes ending with now's, oldest first,
// every minute present (zero when nothing happened in it).
func (tl *Timeline) Last(now time.Time) []MinuteCount {
	end := now.UTC().Truncate(time.Minute)
	out := make([]MinuteCount, TimelineMinutes)
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for i := range out {
		start := end.Add(time.Duration(i-TimelineMinutes+1) * time.Minute)
		out[i] = MinuteCount{Start: start}
		if m := tl.ring[start.Unix()/60%TimelineMinutes]; m.Start.Equal(start) {
			out[i] = m
		}
	}
	return out
}
