package relay

import (
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
)

func TestTimeline(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 30, 0, time.UTC)
	var tl Timeline
	tl.Record(t0, deliver.AttemptDelivered)
	tl.Record(t0.Add(10*time.Second), deliver.AttemptDelivered)
	tl.Record(t0.Add(20*time.Second), deliver.AttemptFailed)
	tl.Record(t0.Add(time.Minute), deliver.AttemptHeld)
	tl.Record(t0.Add(3*time.Minute), deliver.AttemptFailed)

	for _, tc := range []struct {
		name string
		now  time.Time
		// want maps minutes after 10:00 to delivered, failed, held.
		want map[int][3]int
	}{
		{"same hour", t0.Add(5 * time.Minute), map[int][3]int{0: {2, 1, 0}, 1: {0, 0, 1}, 3: {0, 1, 0}}},
		{"first minute ages out", t0.Add(60 * time.Minute), map[int][3]int{1: {0, 0, 1}, 3: {0, 1, 0}}},
		{"all aged out", t0.Add(2 * time.Hour), map[int][3]int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tl.Last(tc.now)
			if len(got) != TimelineMinutes {
				t.Fatalf("%d minutes", len(got))
			}
			if end := tc.now.Truncate(time.Minute); !got[len(got)-1].Start.Equal(end) || !got[0].Start.Equal(end.Add(-59*time.Minute)) {
				t.Fatalf("window %v .. %v; want the hour ending %v", got[0].Start, got[len(got)-1].Start, end)
			}
			for _, m := range got {
				k := int(m.Start.Sub(t0.Truncate(time.Minute)) / time.Minute)
				w := tc.want[k]
				if m.Delivered != w[0] || m.Failed != w[1] || m.Held != w[2] {
					t.Errorf("minute +%d = %d/%d/%d; want %v", k, m.Delivered, m.Failed, m.Held, w)
				}
			}
		})
	}
	// A slot reused by a later minute forgets the earlier one, and a late
	// record for a minute already overwritten is dropped.
	tl.Record(t0.Add(60*time.Minute), deliver.AttemptDelivered)
	tl.Record(t0, deliver.AttemptDelivered)
	if got := tl.Last(t0.Add(60 * time.Minute)); got[59].Delivered != 1 || got[59].Failed != 0 {
		t.Errorf("reused slot = %+v; want one delivery only", got[59])
	}
}
