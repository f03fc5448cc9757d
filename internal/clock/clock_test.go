package clock_test

import (
	"testing"
	"time"

	"github.com/fedkit/fedkit/internal/clock"
)

func TestSource(t *testing.T) {
	t.Parallel()
	at := func(y int) func() time.Time {
		return func() time.Time { return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC) }
	}
	own := clock.New(at(2019))
	own.Adopt(at(2031))
	if y := own.Now().Year(); y != 2019 {
		t.Errorf("a given clock read %d after Adopt, want its own 2019", y)
	}
	unset := clock.New(nil)
	if d := time.Since(unset.Now()); d < 0 || d > time.Minute {
		t.Errorf("an unset clock is %v off time.Now", d)
	}
	unset.Adopt(nil)
	unset.Adopt(at(2031))
	unset.Adopt(at(2019)) // the first adoption stands
	if y := unset.Now().Year(); y != 2031 {
		t.Errorf("an unset clock read %d after Adopt, want the adopted 2031", y)
	}
	var none *clock.Source
	none.Adopt(at(2031)) // nil-safe: a component that keeps no clock
}
