package identity_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/identity"
)

func lines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s is empty", path)
	}
	return out
}

func TestParseDIDCorpus(t *testing.T) {
	for _, s := range lines(t, "testdata/did_valid.txt") {
		t.Run("valid/"+s, func(t *testing.T) {
			d, err := identity.ParseDID(s)
			if err != nil {
				t.Fatalf("ParseDID(%q): %v", s, err)
			}
			if d.String() != s || d.IsZero() {
				t.Fatalf("String = %q", d)
			}
			if m := d.Method(); m != "plc" && m != "web" {
				t.Fatalf("Method = %q", m)
			}
		})
	}
	for _, s := range lines(t, "testdata/did_invalid.txt") {
		t.Run("invalid/"+s, func(t *testing.T) {
			if d, err := identity.ParseDID(s); err == nil {
				t.Fatalf("ParseDID(%q) = %q, want error", s, d)
			} else if !errors.Is(err, identity.ErrInvalidDID) || errors.Is(err, identity.ErrInvalidHandle) {
				t.Fatalf("err = %v, want only ErrInvalidDID", err)
			}
		})
	}
}

func TestParseHandleCorpus(t *testing.T) {
	for _, s := range lines(t, "testdata/handle_valid.txt") {
		t.Run("valid/"+s, func(t *testing.T) {
			h, err := identity.ParseHandle(s)
			if err != nil {
				t.Fatalf("ParseHandle(%q): %v", s, err)
			}
			if h.String() != strings.ToLower(s) {
				t.Fatalf("String = %q, want lower-cased %q", h, s)
			}
		})
	}
	for _, s := range lines(t, "testdata/handle_invalid.txt") {
		t.Run("invalid/"+s, func(t *testing.T) {
			if h, err := identity.ParseHandle(s); err == nil {
				t.Fatalf("ParseHandle(%q) = %q, want error", s, h)
			} else if !errors.Is(err, identity.ErrInvalidHandle) {
				t.Fatalf("err = %v, want ErrInvalidHandle", err)
			}
		})
	}
}

func TestHandleResolvable(t *testing.T) {
	for _, tc := range []struct {
		h    identity.Handle
		want bool
	}{
		{"alice.bridge.test", true}, // .test is allowed for test networks
		{"jay.bsky.social", true},
		{"", false},
		{identity.HandleInvalid, false},
		{"laptop.local", false},
		{"blah.arpa", false},
		{"e.example", false},
		{"x.localhost", false},
		{"x.internal", false},
		{"x.onion", false},
		{"x.alt", false},
		{"some.invalid", false},
	} {
		t.Run(string(tc.h), func(t *testing.T) {
			if got := tc.h.Resolvable(); got != tc.want {
				t.Fatalf("Resolvable(%q) = %v, want %v", tc.h, got, tc.want)
			}
		})
	}
}

func TestTextRoundTrip(t *testing.T) {
	type row struct {
		DID    identity.DID    `json:"did"`
		Handle identity.Handle `json:"handle"`
	}
	in := row{DID: "did:plc:ewvi7nxzyoun6zhxrhs64oiz", Handle: "alice.bridge.test"}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"did":"did:plc:ewvi7nxzyoun6zhxrhs64oiz","handle":"alice.bridge.test"}` {
		t.Fatalf("json = %s", b)
	}
	var out row
	if err := json.Unmarshal([]byte(`{"did":"did:plc:ewvi7nxzyoun6zhxrhs64oiz","handle":"Alice.Bridge.Test"}`), &out); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Fatalf("round trip = %+v, want %+v (handle lower-cased)", out, in)
	}
	if err := json.Unmarshal([]byte(`{"did":"did:key:z6Mk"}`), &out); !errors.Is(err, identity.ErrInvalidDID) {
		t.Fatalf("bad DID: err = %v", err)
	}
	if err := json.Unmarshal([]byte(`{"handle":"no_such"}`), &out); !errors.Is(err, identity.ErrInvalidHandle) {
		t.Fatalf("bad handle: err = %v", err)
	}
	var zero row
	if err := json.Unmarshal([]byte(`{"did":"","handle":""}`), &zero); err != nil || !zero.DID.IsZero() || !zero.Handle.IsZero() {
		t.Fatalf("empty = %+v, %v", zero, err)
	}
}

func FuzzParseDID(f *testing.F) {
	f.Add("did:plc:ewvi7nxzyoun6zhxrhs64oiz")
	f.Add("did:web:example.com")
	f.Add("did:web:localhost%3A8080")
	f.Fuzz(func(t *testing.T, s string) {
		d, err := identity.ParseDID(s)
		if err != nil {
			return
		}
		if d.String() != s || (d.Method() != "plc" && d.Method() != "web") {
			t.Fatalf("ParseDID(%q) = %q method %q", s, d, d.Method())
		}
		// Accepted DIDs are safe in a URL path and a lock key: ASCII, no
		// slash, no whitespace.
		for i := 0; i < len(s); i++ {
			if c := s[i]; c <= ' ' || c >= 0x7f || c == '/' || c == '?' || c == '#' {
				t.Fatalf("accepted %q with byte %q", s, c)
			}
		}
		var back identity.DID
		if err := back.UnmarshalText([]byte(s)); err != nil || back != d {
			t.Fatalf("UnmarshalText(%q) = %q, %v", s, back, err)
		}
	})
}

func FuzzParseHandle(f *testing.F) {
	f.Add("alice.bridge.test")
	f.Add("XX.LCS.MIT.EDU")
	f.Add("john..test")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := identity.ParseHandle(s)
		if err != nil {
			return
		}
		if h.String() != strings.ToLower(s) || len(s) > 253 {
			t.Fatalf("ParseHandle(%q) = %q", s, h)
		}
		// Normalisation is idempotent.
		h2, err := identity.ParseHandle(h.String())
		if err != nil || h2 != h {
			t.Fatalf("reparse(%q) = %q, %v", h, h2, err)
		}
	})
}
