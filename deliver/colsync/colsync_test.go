package colsync_test

import (
	"errors"
	"testing"

	"github.com/fedkit/fedkit/deliver/colsync"
)

func TestDigestVectors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ids  []string
		want string
	}{
		{"EmptyIsZeros", nil, colsync.EmptyDigest},
		// Computed independently (Python hashlib) from the FEP's definition.
		{"One", []string{"https://b.example/users/bob"}, "bc0dbf714059b04d21a5303920e31f9906dcb0526cfe03bcb27915320218393a"},
		{"Two", []string{"https://b.example/users/bob", "https://b.example/users/carol"}, "af52831eaa7a0fae94ae297f4c77bf5542542d6b7e6b43ff8e9ffcded7b46dc9"},
		{"OrderFree", []string{"https://b.example/users/carol", "https://b.example/users/bob"}, "af52831eaa7a0fae94ae297f4c77bf5542542d6b7e6b43ff8e9ffcded7b46dc9"},
		{"DuplicateCancels", []string{"https://b.example/users/bob", "https://b.example/users/bob"}, colsync.EmptyDigest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := colsync.Digest(tc.ids); got != tc.want {
				t.Fatalf("Digest = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDigestOnFiltersByOrigin(t *testing.T) {
	t.Parallel()
	ids := []string{
		"https://b.example/users/bob", "https://b.example/users/carol",
		"https://b.example.net/users/mallory", "https://c.example/users/dan", "http://b.example/users/eve",
		"https://b.example:8443/users/frank",
	}
	want := colsync.Digest(ids[:2])
	if got := colsync.DigestOn("https://b.example", ids); got != want {
		t.Fatalf("DigestOn = %s, want the digest of b.example's two followers only", got)
	}
	if got := colsync.DigestOn("https://b.example:8443", ids); got != colsync.Digest(ids[5:]) {
		t.Fatalf("port not part of the origin")
	}
}

func TestOrigin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"https://B.Example/inbox", "https://b.example"},
		{"https://b.example:8443/users/x/inbox?x=1", "https://b.example:8443"},
		{"/inbox", ""},
		{"b.example/inbox", ""},
	} {
		got, err := colsync.Origin(tc.in)
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("Origin(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestXORBalances(t *testing.T) {
	t.Parallel()
	ids := []string{"https://b.example/users/bob", "https://b.example/users/carol"}
	got, err := colsync.XOR(colsync.Digest(ids), ids...)
	if err != nil || got != colsync.EmptyDigest {
		t.Fatalf("XOR of a digest with its own IDs = %s, %v; want zeros", got, err)
	}
	if _, err := colsync.XOR("abc"); !errors.Is(err, colsync.ErrDigest) {
		t.Fatalf("XOR(short) = %v", err)
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	t.Parallel()
	h := colsync.Header{
		CollectionID: "https://a.example/users/alice/followers",
		Digest:       "af52831eaa7a0fae94ae297f4c77bf5542542d6b7e6b43ff8e9ffcded7b46dc9",
		URL:          "https://a.example/users/alice/followers_synchronization",
	}
	s := h.String()
	want := `collectionId="https://a.example/users/alice/followers", digest="af52831eaa7a0fae94ae297f4c77bf5542542d6b7e6b43ff8e9ffcded7b46dc9", url="https://a.example/users/alice/followers_synchronization"`
	if s != want {
		t.Fatalf("String =\n%s\nwant\n%s", s, want)
	}
	got, err := colsync.ParseHeader(s)
	if err != nil || got != h {
		t.Fatalf("ParseHeader(String) = %+v, %v", got, err)
	}
}

func TestParseHeader(t *testing.T) {
	t.Parallel()
	const d = "af52831eaa7a0fae94ae297f4c77bf5542542d6b7e6b43ff8e9ffcded7b46dc9"
	for _, tc := range []struct {
		name string
		in   string
		want colsync.Header
		err  error
	}{
		{"Mastodon", `collectionId="https://a.example/users/alice/followers", digest="` + d + `", url="https://a.example/users/alice/followers_synchronization"`,
			colsync.Header{"https://a.example/users/alice/followers", d, "https://a.example/users/alice/followers_synchronization"}, nil},
		{"NoSpaces", `collectionId="c",digest="` + d + `",url="u"`, colsync.Header{"c", d, "u"}, nil},
		{"AnyOrderUnknownKeys", `url="u", extra="x", collectionId="c"`, colsync.Header{CollectionID: "c", URL: "u"}, nil},
		{"UpperHexLowered", `collectionId="c", digest="` + "AF52831EAA7A0FAE94AE297F4C77BF5542542D6B7E6B43FF8E9FFCDED7B46DC9" + `", url="u"`, colsync.Header{"c", d, "u"}, nil},
		{"Token", `collectionId=c, url=u`, colsync.Header{CollectionID: "c", URL: "u"}, nil},
		{"Escaped", `collectionId="a\"b", url="u"`, colsync.Header{CollectionID: `a"b`, URL: "u"}, nil},
		{"MissingURL", `collectionId="c", digest="` + d + `"`, colsync.Header{}, colsync.ErrMissing},
		{"MissingCollection", `url="u"`, colsync.Header{}, colsync.ErrMissing},
		{"ShortDigest", `collectionId="c", digest="abc", url="u"`, colsync.Header{}, colsync.ErrDigest},
		{"LongDigest", `collectionId="c", digest="` + d + `00", url="u"`, colsync.Header{}, colsync.ErrDigest},
		{"EmptyDigest", `collectionId="c", digest="", url="u"`, colsync.Header{}, colsync.ErrDigest},
		{"Unterminated", `collectionId="c, url="u`, colsync.Header{}, colsync.ErrSyntax},
		{"TrailingComma", `collectionId="c", url="u",`, colsync.Header{}, colsync.ErrSyntax},
		{"NoEquals", `collectionId`, colsync.Header{}, colsync.ErrSyntax},
		{"Duplicate", `collectionId="c", collectionId="d", url="u"`, colsync.Header{}, colsync.ErrSyntax},
		{"Junk", `collectionId="c" url="u"`, colsync.Header{}, colsync.ErrSyntax},
		{"Empty", ``, colsync.Header{}, colsync.ErrMissing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := colsync.ParseHeader(tc.in)
			if !errors.Is(err, tc.err) || got != tc.want {
				t.Fatalf("ParseHeader(%q) = %+v, %v; want %+v, %v", tc.in, got, err, tc.want, tc.err)
			}
		})
	}
}

func TestFollowersHeaderFor(t *testing.T) {
	t.Parallel()
	f := colsync.Followers{CollectionID: "c", URL: "u", IDs: []string{"https://b.example/users/bob", "https://c.example/users/x"}}
	h := f.HeaderFor("https://b.example")
	if h.Digest != "bc0dbf714059b04d21a5303920e31f9906dcb0526cfe03bcb27915320218393a" || h.CollectionID != "c" || h.URL != "u" {
		t.Fatalf("HeaderFor = %+v", h)
	}
}

func FuzzParseHeader(f *testing.F) {
	f.Add(`collectionId="https://a.example/users/alice/followers", digest="af52831eaa7a0fae94ae297f4c77bf5542542d6b7e6b43ff8e9ffcded7b46dc9", url="https://a.example/u"`)
	f.Add(`collectionId=c,url=u`)
	f.Add(`a="\"", url="u", collectionId="\\"`)
	f.Fuzz(func(t *testing.T, s string) {
		h, err := colsync.ParseHeader(s)
		if err != nil {
			return
		}
		// What parses writes back to something that parses the same.
		again, err := colsync.ParseHeader(h.String())
		if err != nil || again != h {
			t.Fatalf("round trip of %q: %+v -> %+v, %v", s, h, again, err)
		}
	})
}
