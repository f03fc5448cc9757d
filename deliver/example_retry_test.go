package deliver_test

import (
	"fmt"
	"time"

	"github.com/fedkit/fedkit/deliver"
)

func ExampleExponentialRetry() {
	p := deliver.ExponentialRetry(time.Minute, 10*time.Minute, 5)
	for failed := 1; ; failed++ {
		d, ok := p.Next(failed)
		if !ok {
			break
		}
		fmt.Println(d)
	}
	// Output:
	// 1m0s
	// 2m0s
	// 4m0s
	// 8m0s
}

func ExampleCustomRetry() {
	// GoToSocial's schedule: 8, 16, 32, 64, 128 s; 6 attempts.
	p := deliver.CustomRetry(func(failed int) (time.Duration, bool) {
		return 2 * time.Second << failed, failed < 6
	})
	d, _ := p.Next(1)
	fmt.Println(d)
	// Output: 4s
}

func ExampleMastodonRetry() {
	cfg := deliver.DefaultConfig()
	cfg.Retry = deliver.MastodonRetry()
	cfg.Permanent = deliver.MastodonPermanent
	cfg.PermanentIfSenderGone = []int{401}
	cfg.Breaker.PerInbox = true
	_ = cfg
}

func ExampleParseRetryAfter() {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	d1, _ := deliver.ParseRetryAfter("120", now)
	d2, _ := deliver.ParseRetryAfter("Fri, 01 May 2026 12:30:00 GMT", now)
	fmt.Println(d1, d2)
	// Output: 2m0s 30m0s
}

func ExampleDefaultPermanent() {
	fmt.Println(deliver.DefaultPermanent(401), deliver.DefaultPermanent(429), deliver.MastodonPermanent(401), deliver.MastodonPermanent(501))
	// Output: true false false true
}

func ExampleMastodonPermanent() {
	// Mastodon retries a 401 (unless the sender is gone) and gives up on 501.
	for _, status := range []int{401, 410, 429, 501, 503} {
		fmt.Println(status, deliver.MastodonPermanent(status))
	}
	// Output:
	// 401 false
	// 410 true
	// 429 false
	// 501 true
	// 503 false
}
