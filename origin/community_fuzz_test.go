package origin_test

import (
	"net/url"
	"testing"

	"github.com/fedkit/fedkit/origin"
)

func FuzzSanitizeCommunity(f *testing.F) {
	f.Add("lemmy.world", "https://lemmy.world/c/rust", "Lemmy")
	f.Add("Dev.Coves.Social.", "https://dev.coves.social/c/nba", "coves")
	f.Add("https://lemmy.world", "", "")
	f.Add("", "https://lemmy.world/c/rust", "lemmy")
	f.Add("bücher.example", "https://xn--bcher-kva.example/c", "x")
	f.Fuzz(func(t *testing.T, o, u, s string) {
		in := origin.CommunityFields{Origin: o, URL: u, Software: s}
		out, rej := origin.SanitizeCommunity(in)
		if again, rej2 := origin.SanitizeCommunity(out); again != out || len(rej2) != 0 {
			t.Fatalf("not idempotent: %+v -> %+v %v", out, again, rej2)
		}
		// Every asserted field is kept or rejected, never both.
		asserted := 0
		for _, v := range []string{o, u, s} {
			if v != "" {
				asserted++
			}
		}
		kept := 0
		for _, v := range []string{out.Origin, out.URL, out.Software} {
			if v != "" {
				kept++
			}
		}
		if kept+len(rej) != asserted {
			t.Fatalf("asserted %d, kept %d, rejected %v", asserted, kept, rej)
		}
		if out.Origin == "" && (out.URL != "" || out.Software != "") {
			t.Fatalf("URL or software kept without an origin: %+v", out)
		}
		if out.Origin != "" {
			if d, err := origin.NormalizeDomain(out.Origin); err != nil || d != out.Origin {
				t.Fatalf("origin %q not normalised: %q %v", out.Origin, d, err)
			}
		}
		if out.URL != "" {
			pu, err := url.Parse(out.URL)
			if err != nil || pu.Scheme != "https" || pu.User != nil || len(out.URL) > origin.MaxURLBytes {
				t.Fatalf("bad URL kept: %q", out.URL)
			}
			if h, err := origin.NormalizeDomain(pu.Hostname()); err != nil || h != out.Origin {
				t.Fatalf("URL host %q is not origin %q", pu.Hostname(), out.Origin)
			}
		}
		if out.Software != "" {
			if sw, ok := origin.SanitizeSoftware(out.Software); !ok || sw != out.Software {
				t.Fatalf("software %q not clean", out.Software)
			}
		}
	})
}
