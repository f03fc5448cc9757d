package deliver_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
)

func TestDefaultRetrySchedule(t *testing.T) {
	t.Parallel()
	want := []time.Duration{30, 60, 120, 240, 480, 960, 1920, 3600, 3600, 3600, 3600}
	var p deliver.RetryPolicy
	var total time.Duration
	for i, w := range want {
		d, ok := p.Next(i + 1)
		if !ok || d != w*time.Second {
			t.Errorf("after failure %d: %v %v, want %v", i+1, d, ok, w*time.Second)
		}
		total += d
	}
	if _, ok := p.Next(12); ok {
		t.Error("a 13th attempt allowed; the default is 12")
	}
	// The spec's horizon: 18,210 s, about 5 h 4 min.
	if total != 18210*time.Second {
		t.Errorf("total wait %v, want 18210s", total)
	}
}

func TestExponentialRetry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		p        deliver.RetryPolicy
		failed   int
		want     time.Duration
		wantMore bool
	}{
		{"First", deliver.ExponentialRetry(time.Second, time.Minute, 5), 1, time.Second, true},
		{"Doubles", deliver.ExponentialRetry(time.Second, time.Minute, 5), 3, 4 * time.Second, true},
		{"Capped", deliver.ExponentialRetry(10*time.Second, 15*time.Second, 5), 3, 15 * time.Second, true},
		{"NoOverflow", deliver.ExponentialRetry(time.Hour, 2*time.Hour, 1000), 200, 2 * time.Hour, true},
		{"GivesUp", deliver.ExponentialRetry(time.Second, time.Minute, 5), 5, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, more := tc.p.Next(tc.failed)
			if d != tc.want || more != tc.wantMore {
				t.Fatalf("Next(%d) = %v, %v; want %v, %v", tc.failed, d, more, tc.want, tc.wantMore)
			}
		})
	}
}

func TestMastodonRetryWithinSpecBounds(t *testing.T) {
	t.Parallel()
	// Base and max per retry n, in seconds, from Mastodon's schedule.
	base := []float64{15, 16, 31, 96, 271, 640, 1311, 2416, 4111, 6576, 10015, 14656, 20751, 28576, 38431, 50640}
	maxs := []float64{24, 34, 66, 172, 444, 1006, 2022, 3688, 6240, 9946, 15114, 22084, 31236, 42982, 57774, 76096}
	p := deliver.MastodonRetry()
	for range 50 {
		for n := range 16 {
			d, ok := p.Next(n + 1)
			s := d.Seconds()
			if !ok || s < base[n] || s > maxs[n]+1 {
				t.Fatalf("retry %d waits %vs (%v), want within [%v, %v]", n, s, ok, base[n], maxs[n])
			}
		}
	}
	if _, ok := p.Next(17); ok {
		t.Fatal("Mastodon makes 17 attempts in all")
	}
}

func TestPermanentRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status        int
		def, mastodon bool
	}{
		{400, true, true}, {401, true, false}, {403, true, true}, {404, true, true}, {408, false, false},
		{410, true, true}, {422, true, true}, {429, false, false}, {500, false, false}, {501, false, true},
		{502, false, false}, {503, false, false},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			if got := deliver.DefaultPermanent(tc.status); got != tc.def {
				t.Errorf("DefaultPermanent(%d) = %v", tc.status, got)
			}
			if got := deliver.MastodonPermanent(tc.status); got != tc.mastodon {
				t.Errorf("MastodonPermanent(%d) = %v", tc.status, got)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		in   string
		want time.Duration
		ok   bool
	}{
		{"Seconds", "120", 2 * time.Minute, true},
		{"Zero", "0", 0, true},
		{"Spaces", " 5 ", 5 * time.Second, true},
		{"IMFFixdate", "Fri, 01 May 2026 12:10:00 GMT", 10 * time.Minute, true},
		{"RFC850", "Friday, 01-May-26 12:10:00 GMT", 10 * time.Minute, true},
		{"ANSIC", "Fri May  1 12:10:00 2026", 10 * time.Minute, true},
		{"PastDate", "Fri, 01 May 2026 11:00:00 GMT", 0, true},
		{"Huge", "99999999999999999999999", time.Duration(1<<63 - 1), true},
		{"Negative", "-5", 0, false},
		{"Fraction", "1.5", 0, false},
		{"Empty", "", 0, false},
		{"Word", "later", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := deliver.ParseRetryAfter(tc.in, now)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "Fri, 01 May 2026 12:10:00 GMT", "", "-1", "99999999999999999999"} {
		f.Add(s)
	}
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := deliver.ParseRetryAfter(s, now)
		if d < 0 || (!ok && d != 0) {
			t.Fatalf("ParseRetryAfter(%q) = %v, %v", s, d, ok)
		}
	})
}
