package origin_test

import (
	"errors"
	"go/build"
	"net/url"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/origin"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		err            error
	}{
		{"plain https", "https://social.example/users/alice", "https://social.example", nil},
		{"upper-case scheme and host", "HTTPS://Social.Example/x", "https://social.example", nil},
		{"default https port elided", "https://social.example:443/x", "https://social.example", nil},
		{"default http port elided", "http://social.example:80/x", "http://social.example", nil},
		{"leading-zero default port", "https://social.example:0443/", "https://social.example", nil},
		{"other port kept", "https://social.example:8443/x", "https://social.example:8443", nil},
		{"trailing dot trimmed", "https://social.example./x", "https://social.example", nil},
		{"IDN mapped to ASCII", "https://Bücher.example/", "https://xn--bcher-kva.example", nil},
		{"punycode unchanged", "https://xn--bcher-kva.example/", "https://xn--bcher-kva.example", nil},
		{"IPv4 literal", "http://127.0.0.1:8080/", "http://127.0.0.1:8080", nil},
		{"IPv6 literal", "https://[2001:DB8::1]/", "https://[2001:db8::1]", nil},
		{"single label allowed", "http://localhost:3000", "http://localhost:3000", nil},
		{"userinfo ignored", "https://u:p@social.example/", "https://social.example", nil},
		{"relative", "/users/alice", "", origin.ErrInvalidURL},
		{"opaque", "mailto:alice@social.example", "", origin.ErrInvalidURL},
		{"no host", "https:///x", "", origin.ErrInvalidURL},
		{"bad port", "https://social.example:99999/", "", origin.ErrInvalidURL},
		{"underscore host", "https://bad_host.example/", "", origin.ErrInvalidURL},
		{"empty label", "https://a..example/", "", origin.ErrInvalidURL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := origin.Parse(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Parse(%q) error = %v, want %v", tc.in, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if got.String() != tc.want {
				t.Errorf("Parse(%q) = %q, want %q", tc.in, got, tc.want)
			}
			// The serialised origin is a fixed point.
			again, err := origin.Parse(got.String())
			if err != nil || again != got {
				t.Errorf("Parse(String()) = %v, %v; want %v", again, err, got)
			}
		})
	}
}

func TestSameOriginAndHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		a, b       string
		origin, hs bool
	}{
		{"identical", "https://a.example/x", "https://a.example/y", true, true},
		{"case and default port", "HTTPS://A.EXAMPLE:443/x", "https://a.example/y", true, true},
		{"trailing dot", "https://a.example./x", "https://a.example/y", true, true},
		{"other scheme", "http://a.example/x", "https://a.example/x", false, true},
		{"other port", "https://a.example:8443/x", "https://a.example/x", false, true},
		{"subdomain", "https://b.a.example/", "https://a.example/", false, false},
		{"look-alike suffix", "https://evila.example/", "https://a.example/", false, false},
		{"IDN and punycode", "https://bücher.example/", "https://xn--bcher-kva.example/", true, true},
		{"unparsable never same", "::", "::", false, false},
		{"relative never same", "/x", "/x", false, false},
		{"IPv6 forms", "http://[::1]:80/", "http://[0:0::1]/", true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := origin.SameOrigin(tc.a, tc.b); got != tc.origin {
				t.Errorf("SameOrigin = %v, want %v", got, tc.origin)
			}
			if got := origin.SameHost(tc.a, tc.b); got != tc.hs {
				t.Errorf("SameHost = %v, want %v", got, tc.hs)
			}
			ua, ea := url.Parse(tc.a)
			ub, eb := url.Parse(tc.b)
			if ea == nil && eb == nil {
				if got := origin.SameOriginURL(ua, ub); got != tc.origin {
					t.Errorf("SameOriginURL = %v, want %v", got, tc.origin)
				}
				if got := origin.SameHostURL(ua, ub); got != tc.hs {
					t.Errorf("SameHostURL = %v, want %v", got, tc.hs)
				}
			}
		})
	}
}

func TestOriginText(t *testing.T) {
	t.Parallel()
	var o origin.Origin
	if !o.IsZero() || o.String() != "" {
		t.Fatal("zero Origin not zero")
	}
	if err := o.UnmarshalText([]byte("https://A.example:443")); err != nil {
		t.Fatal(err)
	}
	b, _ := o.MarshalText()
	if string(b) != "https://a.example" {
		t.Errorf("MarshalText = %s", b)
	}
	if err := o.UnmarshalText([]byte("nope")); err == nil {
		t.Error("UnmarshalText accepted a relative URL")
	}
}

func TestRegistrableDomain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		err            error
	}{
		{"bridge handle", "alice.lemmy.world.ap.tdpl.io", "tdpl.io", nil},
		{"bridge PDS", "pds.tdpl.io", "tdpl.io", nil},
		{"upper case", "PDS.TDPL.IO", "tdpl.io", nil},
		{"port dropped", "pds.bridge.test:8443", "bridge.test", nil},
		{"trailing dot", "pds.bridge.test.", "bridge.test", nil},
		{"URL", "https://PDS.Bridge.Test:8443/xrpc", "bridge.test", nil},
		{".test is unmanaged TLD", "bridge.test", "bridge.test", nil},
		{"multi-label suffix", "a.b.example.co.uk", "example.co.uk", nil},
		{"private suffix", "alice.github.io", "alice.github.io", nil},
		{"IDN", "www.Bücher.example", "xn--bcher-kva.example", nil},
		{"IPv4", "127.0.0.1", "", origin.ErrIPLiteral},
		{"IPv4 with port", "127.0.0.1:80", "", origin.ErrIPLiteral},
		{"IPv6 bracketed", "[::1]:443", "", origin.ErrIPLiteral},
		{"IPv6 bare", "::1", "", origin.ErrIPLiteral},
		{"IPv4 URL", "https://10.0.0.1/", "", origin.ErrIPLiteral},
		{"numeric last label", "1.2.3", "", origin.ErrIPLiteral},
		{"hex last label", "a.0x7f", "", origin.ErrIPLiteral},
		{"localhost", "localhost", "", origin.ErrSingleLabel},
		{"single label with port", "intranet:8080", "", origin.ErrSingleLabel},
		{"public suffix itself", "co.uk", "", origin.ErrPublicSuffix},
		{"private public suffix", "github.io", "", origin.ErrPublicSuffix},
		{"empty", "", "", origin.ErrInvalidDomain},
		{"empty label", "a..example", "", origin.ErrInvalidDomain},
		{"two trailing dots", "a.example..", "", origin.ErrInvalidDomain},
		{"whitespace", "a .example", "", origin.ErrInvalidDomain},
		{"userinfo URL", "https://u@a.example/", "", origin.ErrInvalidDomain},
		{"label too long", strings.Repeat("a", 64) + ".example", "", origin.ErrInvalidDomain},
		{"leading hyphen", "-a.example", "", origin.ErrInvalidDomain},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := origin.RegistrableDomain(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("RegistrableDomain(%q) = %q, %v; want error %v", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("RegistrableDomain(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestSameRegistrableDomain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, a, b string
		want       bool
	}{
		{"bridge handle and PDS", "alice.lemmy.world.ap.tdpl.io", "https://pds.tdpl.io", true},
		{"PDS with upper case, port and dot", "alice.ap.bridge.test", "https://PDS.Bridge.Test.:8443", true},
		{"other domain", "alice.evil.test", "https://pds.tdpl.io", false},
		{"look-alike", "alice.eviltdpl.io", "https://pds.tdpl.io", false},
		{"error denies", "localhost", "localhost", false},
		{"IP denies", "127.0.0.1", "127.0.0.1", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := origin.SameRegistrableDomain(tc.a, tc.b); got != tc.want {
				t.Errorf("SameRegistrableDomain(%q, %q) = %v", tc.a, tc.b, got)
			}
		})
	}
}

func TestNormalizeDomain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		err            error
	}{
		{"lower-cased", "Lemmy.World", "lemmy.world", nil},
		{"trailing dot", "lemmy.world.", "lemmy.world", nil},
		{"IDN", "Bücher.example", "xn--bcher-kva.example", nil},
		{"URL refused", "https://lemmy.world", "", origin.ErrInvalidDomain},
		{"port refused", "lemmy.world:443", "", origin.ErrInvalidDomain},
		{"userinfo refused", "a@lemmy.world", "", origin.ErrInvalidDomain},
		{"path refused", "lemmy.world/u", "", origin.ErrInvalidDomain},
		{"IP refused", "192.0.2.1", "", origin.ErrIPLiteral},
		{"IPv6 refused", "2001:db8::1", "", origin.ErrIPLiteral},
		{"single label refused", "lemmy", "", origin.ErrSingleLabel},
		{"too long", strings.Repeat("a.", 127) + "ab", "", origin.ErrInvalidDomain},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := origin.NormalizeDomain(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("NormalizeDomain(%q) = %q, %v; want %v", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("NormalizeDomain(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

// TestImports keeps origin a leaf: standard library, x/net and x/text only.
func TestImports(t *testing.T) {
	t.Parallel()
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{
		"golang.org/x/net/publicsuffix":  true,
		"golang.org/x/net/idna":          true,
		"golang.org/x/text/unicode/norm": true,
	}
	for _, imp := range pkg.Imports {
		first, _, _ := strings.Cut(imp, "/")
		if !strings.Contains(first, ".") {
			continue // standard library
		}
		if !allowed[imp] {
			t.Errorf("origin imports %s; it must stay a leaf package", imp)
		}
	}
}
