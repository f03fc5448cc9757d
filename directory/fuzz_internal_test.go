package directory

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzParseStatus: the status decoder never panics, and whatever it
// accepts obeys the schema rules.
func FuzzParseStatus(f *testing.F) {
	f.Add([]byte(statusDoc("2", "")))
	f.Add([]byte(statusDoc("3", listing)))
	f.Add([]byte(statusDoc("4", listing+`,"lifecycle_protocol_versions":[1,2,3]`)))
	f.Add([]byte(`{"schema_version":4,"schema_version":4}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseStatus(b, tOrigin)
		if err != nil {
			return
		}
		if s.SchemaVersion < 2 || s.SchemaVersion > 4 || s.Service != StatusService || s.PublicBaseURL != tOrigin {
			t.Fatalf("accepted %+v", s)
		}
		vs := s.Versions()
		if len(vs) == 0 || vs[0] != V1 || len(vs) > maxStatusVersions || !s.Negotiate().Valid() {
			t.Fatalf("versions %v", vs)
		}
	})
}

// FuzzDecodeLifecycle: the response decoder never panics, successes fit
// their operation, and errors carry a closed code with a fitting status.
func FuzzDecodeLifecycle(f *testing.F) {
	f.Add(200, byte(1), "application/json", "", []byte(okBody(V1, OpHeartbeat, OutcomeRecorded)))
	f.Add(201, byte(0), "application/json", "", []byte(okBody(V1, OpRegister, OutcomeCreated)))
	f.Add(409, byte(1), "application/json", "", []byte(errBody(V1, "relay_not_registered", "relay is not registered")))
	f.Add(429, byte(1), "application/json", "53", []byte(errBody(V1, "rate_limited", "slow down")))
	f.Add(503, byte(2), "application/json", "Wed, 05 Aug 2026 12:34:56 GMT", []byte(errBody(V1, "internal_error", "x")))
	f.Add(404, byte(1), "text/plain", "", []byte("404 page not found\n"))
	now := time.Date(2026, 8, 5, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, sc int, opb byte, ct, ra string, body []byte) {
		op := []Operation{OpRegister, OpHeartbeat, OpUnregister}[int(opb)%3]
		h := http.Header{"Content-Type": {ct}}
		if ra != "" {
			h.Set("Retry-After", ra)
		}
		out, err := decodeLifecycle(V1, op, tActor, sc, h, body, now)
		switch e := err.(type) {
		case nil:
			if !out.fits(op) || (sc != 200 && sc != 201) {
				t.Fatalf("accepted %q with %d", out, sc)
			}
		case *ResponseError:
			if !e.Code.statusFits(sc) || e.RetryAfter < 0 || e.RetryAfter > MaxRetryAfter {
				t.Fatalf("error %+v", e)
			}
		case *InvalidResponseError:
			if strings.ContainsAny(string(e.Reason), "\x00\n") {
				t.Fatal("reason not closed")
			}
		default:
			t.Fatalf("unexpected error type %T", err)
		}
	})
}

// FuzzParseConfig: configuration parsing never panics and whatever it
// accepts is within bounds.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("DIRECTORIES:\n  - origin: https://directory.example\n    enabled: true\nDIRECTORY_SCHEDULER_ENABLED: true\n"))
	f.Add([]byte("DIRECTORY_PROFILE:\n  participation_mode: open\n  languages: [en, fr]\n  contact_url: http://x\n"))
	f.Add([]byte("DIRECTORIES: [{origin: https://a.example}, {origin: https://b.example, enabled: false}]\n"))
	f.Add([]byte("a: &x [1]\nb: *x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, _, err := ParseConfig(b, nil)
		if err != nil {
			return
		}
		if len(s.Directories) > MaxDirectories {
			t.Fatalf("%d directories", len(s.Directories))
		}
		for _, e := range s.Directories {
			if _, err := ParseOrigin(e.Origin); err != nil {
				t.Fatalf("accepted origin %q", e.Origin)
			}
		}
		if _, err := s.Profile.Normalize(); err != nil {
			t.Fatalf("accepted profile fails Normalize: %v", err)
		}
	})
}

// FuzzParseOrigin: accepted origins are exactly their own canonical form
// and stay accepted.
func FuzzParseOrigin(f *testing.F) {
	for _, s := range []string{"https://directory.example", "https://a.example:8443", "https://[2001:db8::1]", "https://x/", "https://A.example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOrigin(s)
		if err != nil {
			return
		}
		if o != s || strings.ContainsAny(o[len("https://"):], "/?#@ ") || strings.HasSuffix(o, ":443") {
			t.Fatalf("accepted %q", s)
		}
	})
}

// FuzzRetryAfter: bounded results for any header value.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"0", "7", "90000", "Wed, 05 Aug 2026 12:34:56 GMT", "later", "-1"} {
		f.Add(s)
	}
	now := time.Date(2026, 8, 5, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := parseRetryAfter([]string{s}, now)
		if d < 0 || d > MaxRetryAfter || (!ok && d != 0) {
			t.Fatalf("%q -> %v %v", s, d, ok)
		}
	})
}

// FuzzProfile: whatever the operator writes, Sanitize yields a profile that
// Normalize accepts unchanged, with a stable digest; a profile Normalize
// accepts normalises to a fixed point.
func FuzzProfile(f *testing.F) {
	f.Add("open", "public", "en, fr,en", "@relay@example.social", "relay@example.com", "https://relay.example/contact", "Public community relay")
	f.Add("Open", "", " ,\x00", "", "Name <a@b.example>", "http://relay.example", "line\nbreak")
	f.Add("closed", "x", "zz,a,,b", "@a@b", "", "https://relay.example/a/../b", "")
	f.Fuzz(func(t *testing.T, mode, avail, list, fedi, email, url, notes string) {
		items := strings.Split(list, ",")
		p := Profile{ParticipationMode: mode, Availability: avail, RelayType: avail, Languages: items, Countries: items,
			Regions: items, Topics: items, ContactFediverse: fedi, ContactEmail: email, ContactURL: url,
			ParticipationURL: url, Notes: notes}
		s, _ := p.Sanitize()
		n, err := s.Normalize()
		if err != nil {
			t.Fatalf("sanitised profile fails Normalize: %v", err)
		}
		if n.Digest() != s.Digest() {
			t.Fatal("Normalize changed a sanitised profile")
		}
		if q, err := p.Normalize(); err == nil {
			again, err := q.Normalize()
			if err != nil || again.Digest() != q.Digest() {
				t.Fatalf("normalisation is not a fixed point: %v", err)
			}
		}
	})
}

// FuzzLoadEnv: a DIRECTORY_PROFILE and DIRECTORIES from the environment
// are either refused or yield opt-in canonical entries and a profile that
// Normalize accepts; the environment never enables the scheduler.
func FuzzLoadEnv(f *testing.F) {
	f.Add("participation_mode: open\nlanguages: [en]\n", "- origin: https://directory.example\n  enabled: true\n", "true")
	f.Add("{notes: \"a\\nb\", contact_url: ftp://x}", "[{origin: https://a.example:443}]", "")
	f.Add("- not a mapping", "origin: x", "1")
	f.Fuzz(func(t *testing.T, profile, dirs, sched string) {
		env := map[string]string{KeyProfile: profile, KeyDirectories: dirs, KeySchedulerEnabled: sched}
		s, _, err := LoadEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, nil)
		if err != nil {
			return
		}
		if s.SchedulerEnabled {
			t.Fatal("the environment enabled the scheduler")
		}
		if len(s.Directories) > MaxDirectories {
			t.Fatalf("%d directories", len(s.Directories))
		}
		for _, e := range s.Directories {
			if _, err := ParseOrigin(e.Origin); err != nil {
				t.Fatalf("accepted origin %q", e.Origin)
			}
		}
		if _, err := s.Profile.Normalize(); err != nil {
			t.Fatalf("accepted profile fails Normalize: %v", err)
		}
	})
}
