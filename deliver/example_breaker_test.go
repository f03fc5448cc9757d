package deliver_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
)

func ExampleMemoryBreakerStore() {
	// Deliverers sharing a store share their breakers (per host here).
	store := &deliver.MemoryBreakerStore{}
	for range 2 {
		cfg := deliver.DefaultConfig()
		cfg.Breaker = &deliver.BreakerConfig{Threshold: 5, CoolOff: 30 * time.Second, Store: store}
		_ = cfg
	}
}

func ExampleMemoryBreakerStore_Lights() {
	ctx := context.Background()
	store := &deliver.MemoryBreakerStore{} // as set in BreakerConfig.Store
	rule := driver.BreakerRule{Threshold: 2, CoolOff: time.Minute}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, host := range []string{"down.example", "down.example", "flaky.example"} {
		_ = store.Record(ctx, host, false, false, now, rule)
	}
	lights := store.Lights() // for a status page: the troubled hosts
	for _, l := range lights {
		if l.OpenUntil.IsZero() {
			fmt.Printf("%s closed, %d failure(s) in a row\n", l.Name, l.Failures)
		} else {
			fmt.Printf("%s open until %s\n", l.Name, l.OpenUntil.Format(time.Kitchen))
		}
	}
	// Output:
	// down.example open until 12:01PM
	// flaky.example closed, 1 failure(s) in a row
}

func ExampleMemoryBreakerStore_Light() {
	store := &deliver.MemoryBreakerStore{}
	l := store.Light("b.example")
	fmt.Println(l.OpenUntil.IsZero(), l.Failures) // never failed: closed
	// Output: true 0
}

// Mastodon keys a breaker by inbox URL and opens it after 10 failures in a
// row; a timeout counts as a failure.
func ExampleBreakerConfig() {
	cfg := deliver.DefaultConfig()
	cfg.Breaker = &deliver.BreakerConfig{Threshold: 10, CoolOff: time.Minute, PerInbox: true}
	_ = cfg
}
