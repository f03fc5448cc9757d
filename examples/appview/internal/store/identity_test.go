package store

import (
	"errors"
	"slices"
	"testing"

	"github.com/fedkit/fedkit/identity"
)

// TestListWithOrigin: every row holding a non-empty origin field is
// listed, whatever its stored PDS; untouched (NULL) and cleared (”) rows
// are not.
func TestListWithOrigin(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	str := func(v string) *string { return &v }
	const (
		userOrigin   = "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa" // origin set, PDS off any list
		userURLOnly  = "did:plc:bbbbbbbbbbbbbbbbbbbbbbbb" // only origin_url set
		userNone     = "did:plc:cccccccccccccccccccccccc" // never touched (NULL)
		userCleared  = "did:plc:dddddddddddddddddddddddd" // cleared ('')
		commOrigin   = "did:plc:eeeeeeeeeeeeeeeeeeeeeeee"
		commNoPDS    = "did:plc:ffffffffffffffffffffffff" // empty stored PDS still counts
		commUsername = "did:plc:gggggggggggggggggggggggg" // communities have no username column
	)
	for did, pds := range map[string]string{userOrigin: "https://pds.gone.test", userURLOnly: "https://pds.bridge.test",
		userNone: "https://pds.bridge.test", userCleared: "https://pds.bridge.test"} {
		if err := s.InsertUser(ctx, did, did[8:12]+".bridge.test", pds); err != nil {
			t.Fatal(err)
		}
	}
	for did, pds := range map[string]string{commOrigin: "https://pds.gone.test", commNoPDS: "", commUsername: "https://pds.gone.test"} {
		if err := s.InsertCommunity(ctx, did, did[8:12]+".bridge.test", "c", pds); err != nil {
			t.Fatal(err)
		}
	}
	apply := func(k Kind, did string, o Origin) {
		t.Helper()
		if _, err := s.ApplyProfile(ctx, k, did, Profile{Rev: "1", Origin: o}); err != nil {
			t.Fatal(err)
		}
	}
	apply(KindUser, userOrigin, Origin{Origin: str("lemmy.world"), Username: str("a")})
	apply(KindUser, userURLOnly, Origin{URL: str("https://lemmy.world/u/b")})
	apply(KindUser, userCleared, Origin{Origin: str("lemmy.world")})
	if _, err := s.ClearOrigin(ctx, KindUser, userCleared); err != nil {
		t.Fatal(err)
	}
	apply(KindCommunity, commOrigin, Origin{Origin: str("lemmy.world"), Software: str("lemmy")})
	apply(KindCommunity, commNoPDS, Origin{Software: str("lemmy")})
	apply(KindCommunity, commUsername, Origin{Username: str("ignored")})

	var got []string
	subs := map[string]identity.Subject{}
	err := s.Identity().ListWithOrigin(ctx, func(sub identity.Subject) error {
		got = append(got, string(sub.DID))
		subs[string(sub.DID)] = sub
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{userOrigin, userURLOnly, commOrigin, commNoPDS}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
	for did, sub := range subs {
		if !sub.HasOrigin {
			t.Errorf("%s listed without HasOrigin", did)
		}
	}
	if sub := subs[commOrigin]; sub.Kind != identity.KindCommunity || sub.PDS != "https://pds.gone.test" {
		t.Errorf("community subject = %+v", sub)
	}

	// Subject.Origin: a community's stored origin; never a user's.
	for did, want := range map[string]string{commOrigin: "lemmy.world", commNoPDS: "", userOrigin: ""} {
		if got := subs[did].Origin; got != want {
			t.Errorf("%s listed with Origin %q, want %q", did, got, want)
		}
		sub, err := s.Identity().Subject(ctx, identity.DID(did))
		if err != nil || sub.Origin != want || !sub.HasOrigin {
			t.Errorf("Subject(%s) = %+v, %v; want Origin %q", did, sub, err, want)
		}
	}

	// fn's first error stops the listing and is returned.
	stop := errors.New("stop")
	n := 0
	err = s.Identity().ListWithOrigin(ctx, func(identity.Subject) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("fn error: err %v after %d calls", err, n)
	}
}
