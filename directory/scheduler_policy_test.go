package directory_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fedkit/fedkit/directory"
)

func TestHeartbeatJitterBoundsAndStability(t *testing.T) {
	t.Parallel()
	seen := map[time.Duration]bool{}
	for i := range 2000 {
		relay := fmt.Sprintf("https://relay%d.example/actor", i%50)
		origin := fmt.Sprintf("https://dir%d.example", i/50)
		j := directory.HeartbeatJitter(relay, origin)
		if j < 0 || j > directory.HeartbeatJitterMax {
			t.Fatalf("jitter %v out of [0, 2h]", j)
		}
		if j%time.Second != 0 {
			t.Fatalf("jitter %v not whole seconds", j)
		}
		if again := directory.HeartbeatJitter(relay, origin); again != j {
			t.Fatalf("jitter not stable: %v then %v", j, again)
		}
		seen[j/(10*time.Minute)] = true
	}
	// Spread: 2000 pairs fill every ten-minute bucket of the two hours.
	if len(seen) < 12 {
		t.Fatalf("jitter poorly spread: %d of 12 buckets used", len(seen))
	}
	a := directory.HeartbeatJitter(schedActor, "https://a.example")
	b := directory.HeartbeatJitter(schedActor, "https://b.example")
	c := directory.HeartbeatJitter("https://other.example/actor", "https://a.example")
	if a == b && a == c {
		t.Fatal("jitter ignores relay and Directory")
	}
}

func TestRetryBackoffSequence(t *testing.T) {
	t.Parallel()
	steps := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute}
	prev := time.Duration(0)
	for n := 1; n <= directory.MaxAttempts; n++ {
		d := directory.RetryBackoff(schedActor, schedOrigin, n)
		if d != directory.RetryBackoff(schedActor, schedOrigin, n) {
			t.Fatal("backoff not deterministic")
		}
		if n <= len(steps) {
			step := steps[n-1]
			// Positive jitter: strictly above the step, at most a quarter more.
			if d <= step || d > step+step/4+time.Second {
				t.Fatalf("attempt %d: %v outside (%v, %v]", n, d, step, step+step/4+time.Second)
			}
		} else if d != directory.BackoffCap {
			t.Fatalf("attempt %d: %v, want the 15m cap", n, d)
		}
		if d < prev {
			t.Fatalf("attempt %d: %v shorter than attempt %d's %v", n, d, n-1, prev)
		}
		prev = d
	}
	if d := directory.RetryBackoff(schedActor, schedOrigin, 0); d != directory.RetryBackoff(schedActor, schedOrigin, 1) {
		t.Fatalf("attempt 0 = %v, want attempt 1's delay", d)
	}
}

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	local := directory.RetryBackoff(schedActor, schedOrigin, 2)
	for _, tc := range []struct {
		name       string
		retryAfter time.Duration
		want       time.Duration
	}{
		{"NoRetryAfterIsLocal", 0, local},
		{"ShortRetryAfterLosesToLocal", 5 * time.Second, local},
		{"LongRetryAfterWins", 2 * time.Hour, 2 * time.Hour},
		{"TwentyFiveHoursCappedAt24", 25 * time.Hour, 24 * time.Hour},
		{"NegativeIgnored", -time.Hour, local},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := directory.RetryDelay(schedActor, schedOrigin, 2, tc.retryAfter); got != tc.want {
				t.Fatalf("RetryDelay = %v, want %v", got, tc.want)
			}
		})
	}
}

func BenchmarkHeartbeatJitter(b *testing.B) {
	// Baseline: formatting the key material alone.
	var base time.Duration
	start := time.Now()
	for i := 0; i < b.N; i++ {
		_ = fmt.Sprint(schedActor, schedOrigin)
	}
	base = time.Since(start)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = directory.HeartbeatJitter(schedActor, schedOrigin)
	}
	b.StopTimer()
	if base > 0 {
		b.ReportMetric(float64(b.Elapsed())/float64(base), "x-vs-sprint")
	}
}
