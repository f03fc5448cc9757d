package origin_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/origin"
)

func TestSanitize(t *testing.T) {
	t.Parallel()
	valid := origin.Fields{Origin: "lemmy.world", Username: "alice", URL: "https://lemmy.world/u/alice", Software: "lemmy"}
	with := func(f func(*origin.Fields)) origin.Fields { v := valid; f(&v); return v }
	rej := func(pairs ...any) []origin.Rejection {
		var out []origin.Rejection
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, origin.Rejection{Field: pairs[i].(origin.Field), Reason: pairs[i+1].(origin.RejectReason)})
		}
		return out
	}
	tests := []struct {
		name string
		in   origin.Fields
		want origin.Fields
		rej  []origin.Rejection
	}{
		{"all valid", valid, valid, nil},
		{"empty in, empty out", origin.Fields{}, origin.Fields{}, nil},
		{"origin normalised", with(func(f *origin.Fields) { f.Origin = "Lemmy.World." }), valid, nil},
		{"origin IDN", origin.Fields{Origin: "Bücher.example", Username: "a"}, origin.Fields{Origin: "xn--bcher-kva.example", Username: "a"}, nil},
		{"origin is URL", with(func(f *origin.Fields) { f.Origin = "https://lemmy.world" }),
			origin.Fields{Software: "lemmy"},
			rej(origin.FieldOrigin, origin.RejectInvalidDomain, origin.FieldUsername, origin.RejectNoOrigin, origin.FieldURL, origin.RejectNoOrigin)},
		{"origin with port", origin.Fields{Origin: "lemmy.world:443", Username: "a"}, origin.Fields{},
			rej(origin.FieldOrigin, origin.RejectInvalidDomain, origin.FieldUsername, origin.RejectNoOrigin)},
		{"origin IP", origin.Fields{Origin: "192.0.2.1", Username: "a"}, origin.Fields{},
			rej(origin.FieldOrigin, origin.RejectInvalidDomain, origin.FieldUsername, origin.RejectNoOrigin)},
		{"origin single label", origin.Fields{Origin: "lemmy", Username: "a"}, origin.Fields{},
			rej(origin.FieldOrigin, origin.RejectInvalidDomain, origin.FieldUsername, origin.RejectNoOrigin)},
		{"origin without username", origin.Fields{Origin: "lemmy.world"}, origin.Fields{},
			rej(origin.FieldOrigin, origin.RejectNoUsername)},
		{"username without origin", origin.Fields{Username: "alice"}, origin.Fields{},
			rej(origin.FieldUsername, origin.RejectNoOrigin)},
		{"username exactly 256 bytes", origin.Fields{Origin: "a.test", Username: strings.Repeat("é", 128)},
			origin.Fields{Origin: "a.test", Username: strings.Repeat("é", 128)}, nil},
		{"username 257 bytes (129 runes of 2 bytes counted as bytes)", origin.Fields{Origin: "a.test", Username: strings.Repeat("é", 128) + "x"},
			origin.Fields{}, rej(origin.FieldOrigin, origin.RejectNoUsername, origin.FieldUsername, origin.RejectTooLong)},
		{"username RLO stripped", origin.Fields{Origin: "a.test", Username: "ali\u202Ece"}, origin.Fields{Origin: "a.test", Username: "alice"}, nil},
		{"username ZWSP stripped", origin.Fields{Origin: "a.test", Username: "al\u200Bice"}, origin.Fields{Origin: "a.test", Username: "alice"}, nil},
		{"username every listed invisible stripped", origin.Fields{Origin: "a.test",
			Username: "a\u00AD\u200C\u200D\u200E\u200F\u202A\u202B\u202C\u202D\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\uFEFFb"},
			origin.Fields{Origin: "a.test", Username: "ab"}, nil},
		{"username C0 and C1 stripped", origin.Fields{Origin: "a.test", Username: "a\x00\x1b\x7f\u0085b"}, origin.Fields{Origin: "a.test", Username: "ab"}, nil},
		{"username other Cf stripped (Arabic letter mark)", origin.Fields{Origin: "a.test", Username: "a\u061Cb"}, origin.Fields{Origin: "a.test", Username: "ab"}, nil},
		{"username only invisibles", origin.Fields{Origin: "a.test", Username: "\u200B\u202E"}, origin.Fields{},
			rej(origin.FieldOrigin, origin.RejectNoUsername, origin.FieldUsername, origin.RejectEmpty)},
		{"username NFC", origin.Fields{Origin: "a.test", Username: "e\u0301"}, origin.Fields{Origin: "a.test", Username: "é"}, nil},
		{"username NFC after strip", origin.Fields{Origin: "a.test", Username: "e\u200B\u0301"}, origin.Fields{Origin: "a.test", Username: "é"}, nil},
		{"username case kept", origin.Fields{Origin: "a.test", Username: "Alice_B"}, origin.Fields{Origin: "a.test", Username: "Alice_B"}, nil},
		{"username space", origin.Fields{Origin: "a.test", Username: "al ice"}, origin.Fields{},
			rej(origin.FieldOrigin, origin.RejectNoUsername, origin.FieldUsername, origin.RejectBadCharacter)},
		{"username ideographic space", origin.Fields{Origin: "a.test", Username: "al\u3000ice"}, origin.Fields{},
			rej(origin.FieldOrigin, origin.RejectNoUsername, origin.FieldUsername, origin.RejectBadCharacter)},
		{"username at sign", origin.Fields{Origin: "a.test", Username: "al@ice"}, origin.Fields{},
			rej(origin.FieldOrigin, origin.RejectNoUsername, origin.FieldUsername, origin.RejectBadCharacter)},
		{"username slash", origin.Fields{Origin: "a.test", Username: "a/b"}, origin.Fields{},
			rej(origin.FieldOrigin, origin.RejectNoUsername, origin.FieldUsername, origin.RejectBadCharacter)},
		{"username colon", origin.Fields{Origin: "a.test", Username: "a:b"}, origin.Fields{},
			rej(origin.FieldOrigin, origin.RejectNoUsername, origin.FieldUsername, origin.RejectBadCharacter)},
		{"username invalid UTF-8", origin.Fields{Origin: "a.test", Username: "a\xffb"}, origin.Fields{},
			rej(origin.FieldOrigin, origin.RejectNoUsername, origin.FieldUsername, origin.RejectInvalidUTF8)},
		{"url http", with(func(f *origin.Fields) { f.URL = "http://lemmy.world/u/alice" }),
			with(func(f *origin.Fields) { f.URL = "" }), rej(origin.FieldURL, origin.RejectNotHTTPS)},
		{"url upper-case scheme fails uri syntax", with(func(f *origin.Fields) { f.URL = "HTTPS://lemmy.world/u/alice" }),
			with(func(f *origin.Fields) { f.URL = "" }), rej(origin.FieldURL, origin.RejectInvalidURI)},
		{"url other host", with(func(f *origin.Fields) { f.URL = "https://evil.example/u/alice" }),
			with(func(f *origin.Fields) { f.URL = "" }), rej(origin.FieldURL, origin.RejectHostMismatch)},
		{"url subdomain of origin", with(func(f *origin.Fields) { f.URL = "https://www.lemmy.world/u/alice" }),
			with(func(f *origin.Fields) { f.URL = "" }), rej(origin.FieldURL, origin.RejectHostMismatch)},
		{"url host case differs", with(func(f *origin.Fields) { f.URL = "https://Lemmy.World/u/alice" }),
			with(func(f *origin.Fields) { f.URL = "https://Lemmy.World/u/alice" }), nil},
		{"url port", with(func(f *origin.Fields) { f.URL = "https://lemmy.world:8443/u/alice" }),
			with(func(f *origin.Fields) { f.URL = "" }), rej(origin.FieldURL, origin.RejectHostMismatch)},
		{"url userinfo", with(func(f *origin.Fields) { f.URL = "https://x@lemmy.world/u/alice" }),
			with(func(f *origin.Fields) { f.URL = "" }), rej(origin.FieldURL, origin.RejectUserinfo)},
		{"url space", with(func(f *origin.Fields) { f.URL = "https://lemmy.world/u/al ice" }),
			with(func(f *origin.Fields) { f.URL = "" }), rej(origin.FieldURL, origin.RejectInvalidURI)},
		{"url non-ASCII", with(func(f *origin.Fields) { f.URL = "https://lemmy.world/u/é" }),
			with(func(f *origin.Fields) { f.URL = "" }), rej(origin.FieldURL, origin.RejectInvalidURI)},
		{"url too long", with(func(f *origin.Fields) { f.URL = "https://lemmy.world/" + strings.Repeat("a", 2048) }),
			with(func(f *origin.Fields) { f.URL = "" }), rej(origin.FieldURL, origin.RejectTooLong)},
		{"url without origin", origin.Fields{URL: "https://lemmy.world/u/alice"}, origin.Fields{},
			rej(origin.FieldURL, origin.RejectNoOrigin)},
		{"software trimmed and lower-cased", with(func(f *origin.Fields) { f.Software = "  Lemmy \n" }), valid, nil},
		{"software 64 bytes", with(func(f *origin.Fields) { f.Software = strings.Repeat("a", 64) }),
			with(func(f *origin.Fields) { f.Software = strings.Repeat("a", 64) }), nil},
		{"software 65 bytes", with(func(f *origin.Fields) { f.Software = strings.Repeat("a", 65) }),
			with(func(f *origin.Fields) { f.Software = "" }), rej(origin.FieldSoftware, origin.RejectInvalidSoftware)},
		{"software blank", with(func(f *origin.Fields) { f.Software = "   " }),
			with(func(f *origin.Fields) { f.Software = "" }), rej(origin.FieldSoftware, origin.RejectInvalidSoftware)},
		{"software kelvin sign", with(func(f *origin.Fields) { f.Software = "\u212Aiwi" }),
			with(func(f *origin.Fields) { f.Software = "" }), rej(origin.FieldSoftware, origin.RejectInvalidSoftware)},
		{"software punctuation", with(func(f *origin.Fields) { f.Software = "gotosocial 0.17" }),
			with(func(f *origin.Fields) { f.Software = "" }), rej(origin.FieldSoftware, origin.RejectInvalidSoftware)},
		{"software alone survives", origin.Fields{Software: "mastodon"}, origin.Fields{Software: "mastodon"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, r := origin.Sanitize(tc.in)
			if got != tc.want {
				t.Errorf("Sanitize = %+q, want %+q", got, tc.want)
			}
			if !reflect.DeepEqual(r, tc.rej) {
				t.Errorf("rejections = %v, want %v", r, tc.rej)
			}
			again, r2 := origin.Sanitize(got)
			if again != got || len(r2) != 0 {
				t.Errorf("not idempotent: %+q, %v", again, r2)
			}
		})
	}
}
