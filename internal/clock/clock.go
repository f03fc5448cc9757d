// Package clock is the project's one rule for time, in code: every
// Config's Now defaults to time.Now, and a component handed to another
// takes that one's clock when its own Now is unset, so that a test sets
// time once, on the outermost component, and every comparison inside sees
// the same clock.
package clock

import (
	"sync/atomic"
	"time"
)

// Source is one component's clock: the Now its Config gave, else the clock
// of the component it was handed to (Adopt), else time.Now. Safe for
// concurrent use.
type Source struct {
	own     bool
	adopted atomic.Pointer[func() time.Time]
	now     func() time.Time
}

// New returns the clock of a component whose Config gave now (nil when it
// gave none).
func New(now func() time.Time) *Source {
	if now != nil {
		return &Source{own: true, now: now}
	}
	return &Source{}
}

// Now returns the current time on this clock.
func (s *Source) Now() time.Time {
	if s.own {
		return s.now()
	}
	if p := s.adopted.Load(); p != nil {
		return (*p)()
	}
	return time.Now()
}

// Adopt makes now this clock when no Now was given and none adopted yet:
// the component is handed to another, whose clock it takes. A nil now does
// nothing.
func (s *Source) Adopt(now func() time.Time) {
	if s == nil || s.own || now == nil {
		return
	}
	s.adopted.CompareAndSwap(nil, &now)
}
