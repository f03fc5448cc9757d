package redisbreaker

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
)

// Fuzz targets for what the display side reads back from Redis, where any
// client of the server may have written: a light's hash, and the SCAN
// pattern built from the key prefix. Seeds are here and in
// testdata/fuzz/<Name>/.

func FuzzParseLight(f *testing.F) {
	f.Add("b.example", "3", "1700000000000", "1700000060000", "")
	f.Add("https://b.example/inbox", "0", "", "", "")
	f.Add("x", "-7", "9223372036854775807", "-9223372036854775808", "1e3")
	f.Add("", "99999999999999999999", "0x10", " 1", "")
	f.Fuzz(func(t *testing.T, name, failures, last, open, probe string) {
		h := map[string]string{"consecutive_failures": failures, "last_failure_at": last,
			"recovery_scheduled_after": open, "recovery_started_at": probe}
		l := parseLight(name, h)
		if l.Name != name {
			t.Fatalf("name %q, want %q", l.Name, name)
		}
		if l.Failures < 0 {
			t.Fatalf("negative failures %d from %q", l.Failures, failures)
		}
		for field, got := range map[string]time.Time{"last_failure_at": l.LastFailure, "recovery_scheduled_after": l.OpenUntil, "recovery_started_at": l.ProbeStarted} {
			n, err := strconv.ParseInt(h[field], 10, 64)
			if (err != nil || n <= 0) != got.IsZero() || (err == nil && n > 0 && got.UnixMilli() != n) {
				t.Fatalf("%s %q read as %v", field, h[field], got)
			}
		}
		switch c := l.Color(time.UnixMilli(1_700_000_030_000)); c {
		case driver.LightGreen, driver.LightRed, driver.LightYellow:
		default:
			t.Fatalf("colour %q", c)
		}
	})
}

// globMatch is Redis's stringmatchlen for the pattern subset that matters:
// '*', '?', '[...]' classes (with '^' and ranges) and '\' escapes, on bytes.
func globMatch(p, s string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for i := len(s); i >= 0; i-- {
				if globMatch(p[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			p, s = p[1:], s[1:]
			continue
		case '[':
			if s == "" {
				return false
			}
			j := 1
			not := j < len(p) && p[j] == '^'
			if not {
				j++
			}
			match := false
			for j < len(p) && p[j] != ']' {
				switch {
				case p[j] == '\\' && j+1 < len(p):
					match = match || p[j+1] == s[0]
					j += 2
				case j+2 < len(p) && p[j+1] == '-':
					lo, hi := p[j], p[j+2]
					if lo > hi {
						lo, hi = hi, lo
					}
					match = match || (s[0] >= lo && s[0] <= hi)
					j += 3
				default:
					match = match || p[j] == s[0]
					j++
				}
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			if j < len(p) {
				j++ // the ']'
			}
			p, s = p[j:], s[1:]
			continue
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
		}
		if s == "" || p[0] != s[0] {
			return false
		}
		p, s = p[1:], s[1:]
	}
	return s == ""
}

func FuzzGlobEscape(f *testing.F) {
	f.Add("fedkit:test:", "b.example")
	f.Add("a*b?c[d]e\\f:", "x")
	f.Add("pre\xff\xfe[", "light")
	f.Add("[^a-z]", "")
	f.Fuzz(func(t *testing.T, prefix, rest string) {
		pat := globEscape(prefix) + "*"
		if !globMatch(pat, prefix+rest) {
			t.Fatalf("pattern %q misses key %q", pat, prefix+rest)
		}
		// Nothing but the prefix's own keys: a key that does not start with
		// the prefix never matches.
		if other := rest + prefix; !strings.HasPrefix(other, prefix) && globMatch(pat, other) {
			t.Fatalf("pattern %q matches foreign key %q", pat, other)
		}
	})
}
