package directory_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/directory"
)

func TestProfileNormalize(t *testing.T) {
	t.Parallel()
	in := directory.Profile{
		ParticipationMode: " open ", Languages: []string{" fr", "en", "fr ", "de"}, Countries: nil,
		Topics: []string{"b", "a", "b"}, ContactURL: "https://relay.example/contact",
	}
	p, err := in.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := p.MarshalJSON()
	want := `{"participation_mode":"open","availability":"","relay_type":"","languages":["de","en","fr"],"countries":[],"regions":[],"topics":["a","b"],"contact_fediverse":"","contact_email":"","contact_url":"https://relay.example/contact","participation_url":"","notes":""}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	// Exactly 12 keys, all present, none null.
	var m map[string]any
	json.Unmarshal(b, &m)
	if len(m) != 12 {
		t.Fatalf("%d keys", len(m))
	}
	for k, v := range m {
		if v == nil {
			t.Errorf("%s is null", k)
		}
	}
	// Normalising twice gives identical bytes and digest.
	p2, err := p.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := p2.MarshalJSON()
	if !bytes.Equal(b, b2) || p.Digest() != p2.Digest() || in.Digest() != p.Digest() {
		t.Fatal("normalisation is not idempotent")
	}
	// Unset profile: explicit empty values.
	var zero directory.Profile
	zb, _ := zero.MarshalJSON()
	if string(zb) != `{"participation_mode":"","availability":"","relay_type":"","languages":[],"countries":[],"regions":[],"topics":[],"contact_fediverse":"","contact_email":"","contact_url":"","participation_url":"","notes":""}` {
		t.Fatalf("zero profile: %s", zb)
	}
}

func TestProfileDigestDetectsChange(t *testing.T) {
	t.Parallel()
	a := directory.Profile{Notes: "one"}
	b := directory.Profile{Notes: "two"}
	if a.Digest() == b.Digest() {
		t.Fatal("different profiles share a digest")
	}
	if len(a.Digest()) != 64 {
		t.Fatalf("digest %q is not hex SHA-256", a.Digest())
	}
	if (directory.Profile{Languages: []string{"en", "fr"}}).Digest() != (directory.Profile{Languages: []string{"fr", "en", "en"}}).Digest() {
		t.Fatal("equivalent lists digest differently")
	}
}

// TestProfileBounds: every bound of spec section 2.3, strict and lenient.
func TestProfileBounds(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return strings.Repeat("x", n) }
	items := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = string(rune('a'+i%26)) + long(i/26)
		}
		return out
	}
	cases := []struct {
		name  string
		p     directory.Profile
		field string // "" = valid
	}{
		{"mode open", directory.Profile{ParticipationMode: "open"}, ""},
		{"mode restricted", directory.Profile{ParticipationMode: "restricted"}, ""},
		{"mode closed", directory.Profile{ParticipationMode: "closed"}, ""},
		{"mode Open", directory.Profile{ParticipationMode: "Open"}, "participation_mode"},
		{"mode invite", directory.Profile{ParticipationMode: "invite"}, "participation_mode"},
		{"availability 256", directory.Profile{Availability: long(256)}, ""},
		{"availability 257", directory.Profile{Availability: long(257)}, "availability"},
		{"relay_type newline", directory.Profile{RelayType: "a\nb"}, "relay_type"},
		{"notes 1024", directory.Profile{Notes: long(1024)}, ""},
		{"notes 1025", directory.Profile{Notes: long(1025)}, "notes"},
		{"notes control", directory.Profile{Notes: "a\x07"}, "notes"},
		{"16 languages", directory.Profile{Languages: items(16)}, ""},
		{"17 languages", directory.Profile{Languages: items(17)}, "languages"},
		{"17 with duplicates is 16", directory.Profile{Languages: append(items(16), "a")}, ""},
		{"item 128", directory.Profile{Topics: []string{long(128)}}, ""},
		{"item 129", directory.Profile{Topics: []string{long(129)}}, "topics"},
		{"empty item", directory.Profile{Regions: []string{"a", "  "}}, "regions"},
		{"fediverse 257", directory.Profile{ContactFediverse: long(257)}, "contact_fediverse"},
		{"email bare", directory.Profile{ContactEmail: "relay@example.com"}, ""},
		{"email with name", directory.Profile{ContactEmail: "Relay <relay@example.com>"}, "contact_email"},
		{"email not an address", directory.Profile{ContactEmail: "relay"}, "contact_email"},
		{"email 321", directory.Profile{ContactEmail: long(310) + "@example.com"}, "contact_email"},
		{"url http", directory.Profile{ContactURL: "http://relay.example/contact"}, "contact_url"},
		{"url percent", directory.Profile{ContactURL: "https://relay.example/a%20b"}, "contact_url"},
		{"url double slash", directory.Profile{ParticipationURL: "https://relay.example//join"}, "participation_url"},
		{"url dot segment", directory.Profile{ParticipationURL: "https://relay.example/a/../join"}, "participation_url"},
		{"url upper host", directory.Profile{ParticipationURL: "https://Relay.example/join"}, "participation_url"},
		{"url origin only", directory.Profile{ParticipationURL: "https://relay.example"}, ""},
		{"url 443", directory.Profile{ContactURL: "https://relay.example:443/c"}, "contact_url"},
		{"over 4096 bytes total", directory.Profile{Notes: long(1000), Languages: items(16), Countries: items(16),
			Regions: []string{long(128), long(127), long(126), long(125), long(124), long(123), long(122), long(121),
				long(120), long(119), long(118), long(117), long(116), long(115), long(114), long(113)},
			Topics: []string{long(128) + "a"[:0], long(100), long(99), long(98), long(97), long(96), long(95), long(94),
				long(93), long(92), long(91), long(90), long(89), long(88), long(87), long(86)}}, "notes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.p.Normalize()
			q, warns := tc.p.Sanitize()
			if tc.field == "" {
				if err != nil || len(warns) != 0 {
					t.Fatalf("err %v warns %v", err, warns)
				}
				return
			}
			if !errors.Is(err, directory.ErrInvalidProfile) {
				t.Fatalf("Normalize accepted it: %v", err)
			}
			if len(warns) == 0 || warns[0].Field != tc.field {
				t.Fatalf("warnings %v, want first on %s", warns, tc.field)
			}
			b, _ := q.MarshalJSON()
			if len(b) > directory.MaxProfileJSONBytes {
				t.Fatalf("sanitised profile is %d bytes", len(b))
			}
			if _, err := q.Normalize(); err != nil {
				t.Fatalf("sanitised profile still invalid: %v", err)
			}
		})
	}
}
