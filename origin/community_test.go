package origin_test

import (
	"errors"
	"testing"

	"github.com/fedkit/fedkit/origin"
)

func TestCommunityOrigin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, asserted, handle string
		bridged                bool
		want                   string
		err                    error
	}{
		{"registrable domain of the handle", "coves.social", "c-nba.dev.coves.social", false, "coves.social", nil},
		{"parent below the registrable domain", "dev.coves.social", "c-nba.dev.coves.social", false, "dev.coves.social", nil},
		{"normalised first", "Dev.Coves.Social.", "c-nba.dev.coves.social", false, "dev.coves.social", nil},
		{"handle's own name refused", "c-nba.dev.coves.social", "c-nba.dev.coves.social", false, "", origin.ErrOriginNotAllowed},
		{"look-alike refused", "evilcoves.social", "c-nba.coves.social", false, "", origin.ErrOriginNotAllowed},
		{"suffix look-alike refused", "s.social", "c.coves.social", false, "", origin.ErrOriginNotAllowed},
		{"unrelated domain refused", "lemmy.world", "c-nba.coves.social", false, "", origin.ErrOriginNotAllowed},
		{"public suffix refused", "social", "c.coves.social", false, "", origin.ErrSingleLabel},
		{"multi-label public suffix refused", "co.uk", "c.example.co.uk", false, "", origin.ErrOriginNotAllowed},
		{"private public suffix refused", "github.io", "c.alice.github.io", false, "", origin.ErrOriginNotAllowed},
		{"child of the handle refused", "x.c.coves.social", "c.coves.social", false, "", origin.ErrOriginNotAllowed},
		{"bridge may assert any domain", "lemmy.world", "rust.lemmy.world.ap.tdpl.io", true, "lemmy.world", nil},
		{"bridge may not assert a public suffix", "co.uk", "x.ap.tdpl.io", true, "", origin.ErrOriginNotAllowed},
		{"bridge malformed origin", "https://lemmy.world", "x.ap.tdpl.io", true, "", origin.ErrInvalidDomain},
		{"URL refused", "https://coves.social", "c.coves.social", false, "", origin.ErrInvalidDomain},
		{"IP refused", "127.0.0.1", "c.coves.social", false, "", origin.ErrIPLiteral},
		{"invalid handle", "coves.social", "localhost", false, "", origin.ErrOriginNotAllowed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := origin.CommunityOrigin(tc.asserted, tc.handle, tc.bridged)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("= %q, %v; want %v", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("= %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
