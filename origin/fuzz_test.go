package origin_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/fedkit/fedkit/origin"
)

func FuzzSanitize(f *testing.F) {
	f.Add("lemmy.world", "Alice", "https://lemmy.world/u/Alice", "Lemmy")
	f.Add("Bücher.example.", "e\u0301\u202E", "https://xn--bcher-kva.example/", " GoToSocial ")
	f.Add("192.0.2.1", "\u200B", "http://x", "\u212Aiwi")
	f.Fuzz(func(t *testing.T, o, u, url, sw string) {
		in := origin.Fields{Origin: o, Username: u, URL: url, Software: sw}
		out, rej := origin.Sanitize(in)
		if (out.Origin == "") != (out.Username == "") {
			t.Fatalf("origin and username not paired: %+q", out)
		}
		if out.URL != "" && out.Origin == "" {
			t.Fatalf("URL without origin: %+q", out)
		}
		if len(out.Username) > origin.MaxUsernameBytes || len(out.URL) > origin.MaxURLBytes || len(out.Software) > origin.MaxSoftwareBytes {
			t.Fatalf("limit exceeded: %+q", out)
		}
		if !utf8.ValidString(out.Username) {
			t.Fatalf("invalid UTF-8 kept: %q", out.Username)
		}
		for _, r := range out.Username {
			if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) || strings.ContainsRune("@/:", r) {
				t.Fatalf("forbidden rune %U kept in %q", r, out.Username)
			}
		}
		if out.Software != strings.ToLower(out.Software) {
			t.Fatalf("software not lower-case: %q", out.Software)
		}
		if out.Origin != "" {
			if d, err := origin.NormalizeDomain(out.Origin); err != nil || d != out.Origin {
				t.Fatalf("origin not canonical: %q", out.Origin)
			}
		}
		n := 0
		for _, s := range []string{o, u, url, sw} {
			if s != "" {
				n++
			}
		}
		if len(rej) > n {
			t.Fatalf("%d rejections for %d asserted fields", len(rej), n)
		}
		again, rej2 := origin.Sanitize(out)
		if again != out || len(rej2) != 0 {
			t.Fatalf("not idempotent: %+q -> %+q %v", out, again, rej2)
		}
	})
}

func FuzzParseAddress(f *testing.F) {
	for _, s := range []string{"did:plc:ewvi7nxzyoun6zhxrhs64oiz", "alice.bsky.social", "@Alice@lemmy.world",
		"a@b@c.test", "@@a@b.test", "al\u202Eice@x.test", "\xff@x.test", "did:web:localhost%3A8080", "@x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := origin.ParseAddress(s)
		if err != nil {
			return
		}
		if !utf8.ValidString(s) || len(s) > origin.MaxAddressBytes {
			t.Fatalf("accepted %q", s)
		}
		switch a.Kind {
		case origin.KindOrigin:
			if a.Name == "" || len(a.Name) > origin.MaxUsernameBytes {
				t.Fatalf("bad name %q", a.Name)
			}
			for _, r := range a.Name {
				if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) {
					t.Fatalf("control %U in name", r)
				}
			}
			if _, err := origin.NormalizeDomain(a.Host); err != nil {
				t.Fatalf("bad host %q", a.Host)
			}
		case origin.KindDID:
			if !strings.HasPrefix(a.DID, "did:") {
				t.Fatalf("bad DID %q", a.DID)
			}
		case origin.KindHandle:
			if a.Handle != strings.ToLower(a.Handle) {
				t.Fatalf("handle not lower-case %q", a.Handle)
			}
		default:
			t.Fatalf("kind %d", a.Kind)
		}
		again, err := origin.ParseAddress(a.String())
		if err != nil || again != a {
			t.Fatalf("round trip of %q: %+v, %v", a.String(), again, err)
		}
	})
}

func FuzzRegistrableDomain(f *testing.F) {
	for _, s := range []string{"pds.tdpl.io", "PDS.Bridge.Test.:8443", "https://a.b.example.co.uk/x", "127.0.0.1",
		"[::1]:80", "localhost", "co.uk", "a.0x7f", "xn--bcher-kva.example", "bücher.example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rd, err := origin.RegistrableDomain(s)
		if err != nil {
			return
		}
		if rd == "" || strings.Count(rd, ".") < 1 {
			t.Fatalf("RegistrableDomain(%q) = %q", s, rd)
		}
		if rd != strings.ToLower(rd) || strings.HasSuffix(rd, ".") {
			t.Fatalf("not canonical: %q", rd)
		}
		// The registrable domain of a registrable domain is itself.
		if again, err := origin.RegistrableDomain(rd); err != nil || again != rd {
			t.Fatalf("RegistrableDomain(%q) = %q, %v", rd, again, err)
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"https://a.example/x", "HTTP://[::1]:80/", "https://Bücher.example./", "mailto:x@y", "//x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := origin.Parse(s)
		if err != nil {
			return
		}
		again, err := origin.Parse(o.String())
		if err != nil || again != o {
			t.Fatalf("Parse(%q) = %v; reparse %v, %v", s, o, again, err)
		}
		if !origin.SameOrigin(s, o.String()) || !origin.SameHost(s, o.String()) {
			t.Fatalf("%q not same origin as its origin %v", s, o)
		}
	})
}
