package deliver_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
)

// BenchmarkAvailabilityCheck measures what the availability rule adds to a
// delivery from memory: the check before sending (Unavailable) and the
// sign of life after a success (SeenAlive), on a store holding 10,000
// failing hosts, for a healthy host (the common case) and a failing one.
// check_over_rsa_sign is the cost over an RSA-2048 signature measured in
// the same run, what a delivery's CPU mostly is.
func BenchmarkAvailabilityCheck(b *testing.B) {
	ctx := context.Background()
	s := deliver.NewMemoryAvailabilityStore(0)
	now := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	rule := driver.AvailabilityRule{Days: deliver.AvailabilityDaysDefault}
	for i := range 10_000 {
		_, _, _ = s.Failure(ctx, fmt.Sprintf("h%d.example", i), now, rule)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	digest := sha256.Sum256([]byte("x"))
	start := time.Now()
	const signs = 50
	for range signs {
		_, _ = key.Sign(rand.Reader, digest[:], crypto.SHA256)
	}
	signNs := float64(time.Since(start).Nanoseconds()) / signs
	for _, tc := range []struct{ name, host string }{{"healthy", "up.example"}, {"failing", "h42.example"}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					_, _, _ = s.Unavailable(ctx, tc.host)
					if tc.host == "up.example" {
						_ = s.SeenAlive(ctx, tc.host)
					}
				}
			})
			b.StopTimer()
			per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(per/signNs, "check_over_rsa_sign")
		})
	}
}
