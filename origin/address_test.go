package origin_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/origin"
)

func TestParseAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want origin.Address
		code origin.BadRequestCode
	}{
		{"did:plc", "did:plc:ewvi7nxzyoun6zhxrhs64oiz", origin.Address{Kind: origin.KindDID, DID: "did:plc:ewvi7nxzyoun6zhxrhs64oiz"}, ""},
		{"did:web", "did:web:example.com", origin.Address{Kind: origin.KindDID, DID: "did:web:example.com"}, ""},
		{"did:web with port", "did:web:localhost%3A8080", origin.Address{Kind: origin.KindDID, DID: "did:web:localhost%3A8080"}, ""},
		{"malformed did", "did:plc:", origin.Address{}, origin.BadDID},
		{"did with upper-case method", "did:PLC:abc", origin.Address{}, origin.BadDID},
		{"did with space-free junk", "did:plc:a/b", origin.Address{}, origin.BadDID},
		{"handle", "Alice.Lemmy.World.ap.tdpl.io", origin.Address{Kind: origin.KindHandle, Handle: "alice.lemmy.world.ap.tdpl.io"}, ""},
		{"handle with leading @", "@alice.bsky.social", origin.Address{Kind: origin.KindHandle, Handle: "alice.bsky.social"}, ""},
		{"single-label handle", "alice", origin.Address{}, origin.BadHandle},
		{"IDN handle refused", "bücher.example", origin.Address{}, origin.BadHandle},
		{"name@host", "Alice@lemmy.world", origin.Address{Kind: origin.KindOrigin, Name: "Alice", Host: "lemmy.world"}, ""},
		{"@name@host", "@Alice@Lemmy.World", origin.Address{Kind: origin.KindOrigin, Name: "Alice", Host: "lemmy.world"}, ""},
		{"split at last @", "a@b@lemmy.world", origin.Address{Kind: origin.KindOrigin, Name: "a@b", Host: "lemmy.world"}, ""},
		{"only one leading @ stripped", "@@a@lemmy.world", origin.Address{Kind: origin.KindOrigin, Name: "@a", Host: "lemmy.world"}, ""},
		{"name NFC, case kept", "E\u0301mile@a.test", origin.Address{Kind: origin.KindOrigin, Name: "Émile", Host: "a.test"}, ""},
		{"name 256 bytes", strings.Repeat("é", 128) + "@a.test", origin.Address{Kind: origin.KindOrigin, Name: strings.Repeat("é", 128), Host: "a.test"}, ""},
		{"name 258 bytes", strings.Repeat("é", 129) + "@a.test", origin.Address{}, origin.BadNameTooLong},
		{"empty", "", origin.Address{}, origin.BadEmpty},
		{"empty name", "@@lemmy.world", origin.Address{}, origin.BadName},
		{"empty host", "alice@", origin.Address{}, origin.BadHost},
		{"host with port", "alice@lemmy.world:443", origin.Address{}, origin.BadHost},
		{"host IP", "alice@192.0.2.1", origin.Address{}, origin.BadHost},
		{"invalid UTF-8", "al\xffice@lemmy.world", origin.Address{}, origin.BadUTF8},
		{"NUL", "al\x00ice@lemmy.world", origin.Address{}, origin.BadControl},
		{"newline", "alice\n@lemmy.world", origin.Address{}, origin.BadControl},
		{"RLO", "ali\u202Ece@lemmy.world", origin.Address{}, origin.BadControl},
		{"zero-width space", "al\u200Bice@lemmy.world", origin.Address{}, origin.BadControl},
		{"too long overall", strings.Repeat("a", 2049), origin.Address{}, origin.BadTooLong},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := origin.ParseAddress(tc.in)
			if tc.code != "" {
				var be *origin.BadRequestError
				if !errors.As(err, &be) || be.Code != tc.code || !errors.Is(err, origin.ErrBadRequest) {
					t.Fatalf("ParseAddress(%q) = %+v, %v; want bad request %s", tc.in, got, err, tc.code)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseAddress(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
			if again, err := origin.ParseAddress(got.String()); err != nil || again != got {
				t.Errorf("round trip %q = %+v, %v", got.String(), again, err)
			}
		})
	}
}

type fakeIndex struct {
	exact, fold []string
	err         error
	foldCalls   int
}

func (f *fakeIndex) ExactOrigin(ctx context.Context, name, host string) ([]string, error) {
	return f.exact, f.err
}

func (f *fakeIndex) FoldOrigin(ctx context.Context, name, host string) ([]string, error) {
	f.foldCalls++
	return f.fold, f.err
}

func TestLookupOrigin(t *testing.T) {
	t.Parallel()
	addr := origin.Address{Kind: origin.KindOrigin, Name: "Alice", Host: "lemmy.world"}
	outage := errors.New("db down")
	tests := []struct {
		name      string
		idx       fakeIndex
		want      string
		err       error
		foldCalls int
	}{
		{"exact wins over case-insensitive", fakeIndex{exact: []string{"did:a"}, fold: []string{"did:a", "did:b"}}, "did:a", nil, 0},
		{"unique case-insensitive", fakeIndex{fold: []string{"did:b"}}, "did:b", nil, 1},
		{"same DID twice is unique", fakeIndex{fold: []string{"did:b", "did:b"}}, "did:b", nil, 1},
		{"two case-insensitive matches", fakeIndex{fold: []string{"did:b", "did:c"}}, "", origin.ErrAmbiguous, 1},
		{"two exact matches", fakeIndex{exact: []string{"did:a", "did:b"}}, "", origin.ErrAmbiguous, 0},
		{"none", fakeIndex{}, "", origin.ErrNotFound, 1},
		{"outage is not not-found", fakeIndex{err: outage}, "", outage, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idx := tc.idx
			got, err := origin.LookupOrigin(context.Background(), &idx, addr)
			if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("LookupOrigin = %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
			if errors.Is(err, outage) && errors.Is(err, origin.ErrNotFound) {
				t.Fatal("outage reported as not found")
			}
			if idx.foldCalls != tc.foldCalls {
				t.Errorf("fold calls = %d, want %d", idx.foldCalls, tc.foldCalls)
			}
		})
	}
	if _, err := origin.LookupOrigin(context.Background(), &fakeIndex{}, origin.Address{Kind: origin.KindDID, DID: "did:plc:x"}); !errors.Is(err, origin.ErrBadRequest) {
		t.Errorf("non-origin address: %v", err)
	}
}

func TestChoose(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		rows []origin.Match
		want string
		err  error
	}{
		{"exact among several", []origin.Match{{"did:a", "alice"}, {"did:b", "Alice"}}, "did:b", nil},
		{"unique folded", []origin.Match{{"did:a", "ALICE"}}, "did:a", nil},
		{"two folded", []origin.Match{{"did:a", "alice"}, {"did:b", "ALICE"}}, "", origin.ErrAmbiguous},
		{"two exact", []origin.Match{{"did:a", "Alice"}, {"did:b", "Alice"}}, "", origin.ErrAmbiguous},
		{"none", nil, "", origin.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := origin.Choose("Alice", tc.rows)
			if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("Choose = %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}
