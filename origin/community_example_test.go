package origin_test

import (
	"context"
	"fmt"

	"github.com/fedkit/fedkit/origin"
)

// fixedResolution is an origin.Resolver answering one resolution.
type fixedResolution origin.Resolution

func (f fixedResolution) ResolveFresh(context.Context, string) (origin.Resolution, error) {
	return origin.Resolution(f), nil
}

func ExampleSanitizeCommunity() {
	f, rej := origin.SanitizeCommunity(origin.CommunityFields{Origin: "Lemmy.World", URL: "https://evil.test/c/rust", Software: " Lemmy "})
	fmt.Printf("%+v %v\n", f, rej)
	// Output: {Origin:lemmy.world URL: Software:lemmy} [{originUrl host-mismatch}]
}

func ExampleAdmitter_AdmitCommunity() {
	// A community on its own PDS (not the bridge): it may claim its
	// handle's registrable domain, never somebody else's.
	did := "did:plc:ewvi7nxzyoun6zhxrhs64oiz"
	res := fixedResolution{DID: did, Handle: "c-nba.dev.coves.social", PDS: "https://pds.coves.social", HandleDID: did}
	a, err := origin.NewAdmitter(res, &origin.AdmitConfig{TrustedHosts: []string{"pds.tdpl.io"}})
	if err != nil {
		panic(err)
	}
	for _, o := range []string{"coves.social", "lemmy.world"} {
		d := a.AdmitCommunity(context.Background(), origin.CommunityEvent{DID: did, Fields: origin.CommunityFields{Origin: o}, Known: true})
		fmt.Println(o, d.Outcome, d.Reason, d.PDS)
	}
	// Output:
	// coves.social admit admitted https://pds.coves.social
	// lemmy.world clear origin-not-allowed https://pds.coves.social
}
