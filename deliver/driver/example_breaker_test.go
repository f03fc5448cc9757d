package driver_test

import (
	"fmt"
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
)

// Colours follow stoplight's: red while cooling off, then yellow while
// one probe at a time is let through.
func ExampleBreakerLight_Color() {
	t0 := time.Unix(1_700_000_000, 0)
	l := driver.BreakerLight{Name: "b.example", OpenUntil: t0.Add(time.Minute)}
	fmt.Println(driver.BreakerLight{Name: "c.example"}.Color(t0), l.Color(t0), l.Color(t0.Add(time.Minute)))
	// Output: green red yellow
}
