package directory

import "time"

// adoptClock hands now to x when x is this package's Client or
// MemoryStateStore and keeps no clock of its own: the project's clock rule
// (a component handed to another takes that one's clock when its own Now
// is unset), so a test sets time once, on the Scheduler.
func adoptClock(x any, now func() time.Time) {
	switch v := x.(type) {
	case *Client:
		if v != nil {
			v.clock.Adopt(now)
		}
	case *MemoryStateStore:
		if v != nil && v.Now == nil {
			v.adopted.CompareAndSwap(nil, &now)
		}
	}
}
