package origin_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fedkit/fedkit/origin"
)

func ExampleSameOrigin() {
	fmt.Println(origin.SameOrigin("https://social.example/users/alice", "HTTPS://Social.Example:443/outbox"))
	fmt.Println(origin.SameOrigin("https://social.example/", "http://social.example/"))
	// Output:
	// true
	// false
}

func ExampleSameHost() {
	fmt.Println(origin.SameHost("https://social.example/", "http://social.example:8080/"))
	// Output: true
}

func ExampleSameOriginURL() {
	fmt.Println(origin.SameOriginURL(nil, nil))
	// Output: false
}

func ExampleSameHostURL() {
	fmt.Println(origin.SameHostURL(nil, nil))
	// Output: false
}

func ExampleParse() {
	o, _ := origin.Parse("https://Bücher.example.:443/p?q=1")
	fmt.Println(o)
	// Output: https://xn--bcher-kva.example
}

func ExampleOfURL() {
	_, err := origin.OfURL(nil)
	fmt.Println(errors.Is(err, origin.ErrInvalidURL))
	// Output: true
}

func ExampleRegistrableDomain() {
	rd, _ := origin.RegistrableDomain("https://PDS.tdpl.io:443/")
	fmt.Println(rd)
	_, err := origin.RegistrableDomain("127.0.0.1")
	fmt.Println(errors.Is(err, origin.ErrIPLiteral))
	_, err = origin.RegistrableDomain("localhost")
	fmt.Println(errors.Is(err, origin.ErrSingleLabel))
	// Output:
	// tdpl.io
	// true
	// true
}

func ExampleSameRegistrableDomain() {
	fmt.Println(origin.SameRegistrableDomain("alice.lemmy.world.ap.tdpl.io", "https://pds.tdpl.io"))
	// Output: true
}

func ExampleNormalizeDomain() {
	d, _ := origin.NormalizeDomain("Lemmy.World.")
	fmt.Println(d)
	// Output: lemmy.world
}

func ExampleSanitize() {
	f, rejected := origin.Sanitize(origin.Fields{
		Origin:   "Lemmy.World",
		Username: "ali\u202Ece", // an RLO would reverse the display
		URL:      "http://lemmy.world/u/alice",
		Software: " Lemmy ",
	})
	fmt.Printf("%q %q %q %q\n", f.Origin, f.Username, f.URL, f.Software)
	fmt.Println(rejected)
	// Output:
	// "lemmy.world" "alice" "" "lemmy"
	// [{originUrl not-https}]
}

func ExampleSanitizeUsername() {
	u, _ := origin.SanitizeUsername("al\u200Bice")
	fmt.Println(u)
	// Output: alice
}

func ExampleSanitizeSoftware() {
	fmt.Println(origin.SanitizeSoftware(" GoToSocial "))
	// Output: gotosocial true
}

// staticResolver stands in for the identity package's uncached resolver.
type staticResolver origin.Resolution

func (s staticResolver) ResolveFresh(ctx context.Context, did string) (origin.Resolution, error) {
	return origin.Resolution(s), nil
}

func ExampleNewAdmitter() {
	res := staticResolver{DID: "did:plc:abc", Handle: "alice.lemmy.world.ap.tdpl.io",
		PDS: "https://pds.tdpl.io", HandleDID: "did:plc:abc"}
	adm, err := origin.NewAdmitter(res, &origin.AdmitConfig{TrustedHosts: []string{"pds.tdpl.io"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(adm != nil)
	// Output: true
}

func ExampleAdmitter_Admit() {
	res := staticResolver{DID: "did:plc:abc", Handle: "alice.lemmy.world.ap.tdpl.io",
		PDS: "https://pds.tdpl.io", HandleDID: "did:plc:abc"}
	adm, _ := origin.NewAdmitter(res, &origin.AdmitConfig{TrustedHosts: []string{"pds.tdpl.io"}})
	d := adm.Admit(context.Background(), origin.Event{
		DID:    "did:plc:abc",
		Fields: origin.Fields{Origin: "lemmy.world", Username: "alice", Software: "lemmy"},
		Known:  true,
	})
	fmt.Println(d.Outcome, d.Reason, *d.Write.Origin, *d.Write.Username, *d.Write.URL == "")
	// Output: admit admitted lemmy.world alice true
}

func ExampleAdmitter_ClearOnRefresh() {
	adm, _ := origin.NewAdmitter(staticResolver{}, &origin.AdmitConfig{TrustedHosts: []string{"pds.tdpl.io"}})
	moved := origin.Resolution{DID: "did:plc:abc", Handle: "alice.example.com", PDS: "https://pds.example.com", HandleDID: "did:plc:abc"}
	if clear, reason := adm.ClearOnRefresh(moved); clear {
		w := origin.ClearAll() // store "" in every origin column
		fmt.Println(reason, *w.Origin == "")
	}
	// Output: pds-untrusted true
}

func ExampleClearOnAccountStatus() {
	fmt.Println(origin.ClearOnAccountStatus("takendown"))
	// Output: true
}

func ExampleNewTrustedHosts() {
	th, _ := origin.NewTrustedHosts([]string{"https://PDS.tdpl.io:443"})
	fmt.Println(th.Contains("https://pds.tdpl.io/"), th.Contains("https://pds.tdpl.io:8443"))
	// Output: true false
}

func ExampleParseAddress() {
	a, _ := origin.ParseAddress("@Alice@Lemmy.World")
	fmt.Println(a.Kind == origin.KindOrigin, a.Name, a.Host)
	_, err := origin.ParseAddress("ali\u202Ece@lemmy.world")
	fmt.Println(errors.Is(err, origin.ErrBadRequest))
	// Output:
	// true Alice lemmy.world
	// true
}

// mapIndex stands in for the application's table of origin fields.
type mapIndex map[[2]string]string

func (m mapIndex) ExactOrigin(ctx context.Context, name, host string) ([]string, error) {
	if did, ok := m[[2]string{name, host}]; ok {
		return []string{did}, nil
	}
	return nil, nil
}

func (m mapIndex) FoldOrigin(ctx context.Context, name, host string) ([]string, error) {
	var out []string
	for k, did := range m {
		if k[1] == host && strings.EqualFold(k[0], name) {
			out = append(out, did)
		}
	}
	return out, nil
}

func ExampleLookupOrigin() {
	idx := mapIndex{{"Alice", "lemmy.world"}: "did:plc:a", {"ALICE", "lemmy.world"}: "did:plc:b"}
	exact, _ := origin.ParseAddress("Alice@lemmy.world")
	fmt.Println(origin.LookupOrigin(context.Background(), idx, exact))
	typed, _ := origin.ParseAddress("alice@lemmy.world")
	_, err := origin.LookupOrigin(context.Background(), idx, typed)
	fmt.Println(errors.Is(err, origin.ErrAmbiguous))
	// Output:
	// did:plc:a <nil>
	// true
}

func ExampleChoose() {
	fmt.Println(origin.Choose("alice", []origin.Match{{DID: "did:plc:a", Username: "Alice"}}))
	// Output: did:plc:a <nil>
}

func ExampleCommunityOrigin() {
	o, _ := origin.CommunityOrigin("dev.coves.social", "c-nba.dev.coves.social", false)
	fmt.Println(o)
	_, err := origin.CommunityOrigin("evilcoves.social", "c-nba.coves.social", false)
	fmt.Println(errors.Is(err, origin.ErrOriginNotAllowed))
	// Output:
	// dev.coves.social
	// true
}

func ExampleClearAll() {
	w := origin.ClearAll()
	fmt.Printf("%q %q %q %q\n", *w.Origin, *w.Username, *w.URL, *w.Software)
	// Output: "" "" "" ""
}

func ExampleTrustedHosts_Contains() {
	var none origin.TrustedHosts // deny by default
	fmt.Println(none.Contains("https://pds.tdpl.io"))
	// Output: false
}
