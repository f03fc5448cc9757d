package deliver_test

import (
	"context"
	"fmt"
	"log"
	"net/url"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
)

// A host failing on seven distinct days becomes unavailable; an activity
// from it (the inbox calls SeenAlive) makes it available again.
func ExampleMemoryAvailabilityStore() {
	ctx := context.Background()
	s := deliver.NewMemoryAvailabilityStore(0)
	rule := driver.AvailabilityRule{Days: deliver.AvailabilityDaysDefault}
	day := time.Date(2031, 3, 1, 12, 0, 0, 0, time.UTC)
	for d := range 7 {
		since, down, _ := s.Failure(ctx, "gone.example", day.AddDate(0, 0, d), rule)
		if down {
			fmt.Println("unavailable since", since.Format(time.DateOnly))
		}
	}
	_ = s.SeenAlive(ctx, "gone.example")
	_, down, _ := s.Unavailable(ctx, "gone.example")
	fmt.Println("unavailable after an activity from it:", down)
	// Output:
	// unavailable since 2031-03-07
	// unavailable after an activity from it: false
}

// Deliveries skipped because their host is unavailable reach a hook.
func ExampleAvailabilityConfig() {
	cfg := deliver.DefaultConfig()
	cfg.Availability = deliver.AvailabilityConfig{
		Days: 7,
		OnSkipped: func(ctx context.Context, s deliver.UnavailableSkip) {
			fmt.Println("skipped", s.Inbox, "unavailable since", s.Since)
		},
	}
	_ = cfg
}

// The application's inbox tells the Deliverer a host is alive whenever a
// verified activity arrives from it, so that a host marked unavailable gets
// deliveries again.
func ExampleDeliverer_SeenAlive() {
	var d *deliver.Deliverer // from deliver.New
	onVerified := func(ctx context.Context, keyID *url.URL) {
		if err := d.SeenAlive(ctx, keyID.Host); err != nil {
			log.Print(err)
		}
	}
	_ = onVerified
}
