package identity_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
	"github.com/fedkit/fedkit/internal/fixture"
)

const (
	didA   = identitytest.DIDAlice
	didB   = identitytest.DIDBob
	bridge = "https://pds.bridge.test"
)

func TestParseDocumentFixtures(t *testing.T) {
	t.Run("did_plc_doc", func(t *testing.T) {
		did := identity.DID("did:plc:ewvi7nxzyoun6zhxrhs64oiz")
		id, err := identity.ParseDocument(did, fixture.Shared(t, "jetstream/plc/did_plc_doc.indigo.json"))
		if err != nil {
			t.Fatal(err)
		}
		if id.DeclaredHandle != "atproto.com" || id.PDS != "https://bsky.social" ||
			id.SigningKey != "zQ3shXjHeiBuRCKmM36cuYnm7YEMzhGnCmCyW92sRJ9pribSF" || id.Handle != identity.HandleInvalid {
			t.Fatalf("identity = %+v", id)
		}
	})
	t.Run("did_web_doc_feed_generator", func(t *testing.T) {
		did := identity.DID("did:web:discover.bsky.social")
		id, err := identity.ParseDocument(did, fixture.Shared(t, "jetstream/plc/did_web_doc.indigo.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !id.DeclaredHandle.IsZero() || id.PDS != "" || id.SigningKey != "" {
			t.Fatalf("identity = %+v, want no handle, PDS or key", id)
		}
	})
}

func TestParseDocumentRules(t *testing.T) {
	for _, tc := range []struct {
		name     string
		doc      string
		declared identity.Handle
		pds      string
		wantErr  error
	}{
		{"FirstParsableAtURIWins", `{"id":"` + string(didA) + `","alsoKnownAs":["https://x.test","at://bad_handle","at://Alice.Bridge.Test","at://second.test"]}`, "alice.bridge.test", "", nil},
		{"NoAtURI", `{"id":"` + string(didA) + `","alsoKnownAs":["https://alice.test"]}`, "", "", nil},
		{"PDSByFullID", `{"id":"` + string(didA) + `","service":[{"id":"` + string(didA) + `#atproto_pds","type":"AtprotoPersonalDataServer","serviceEndpoint":"https://pds.test"}]}`, "", "https://pds.test", nil},
		{"PDSWrongType", `{"id":"` + string(didA) + `","service":[{"id":"#atproto_pds","type":"Other","serviceEndpoint":"https://pds.test"}]}`, "", "", nil},
		{"PDSNotURL", `{"id":"` + string(didA) + `","service":[{"id":"#atproto_pds","type":"AtprotoPersonalDataServer","serviceEndpoint":"javascript:alert(1)"}]}`, "", "", nil},
		{"PDSEndpointObject", `{"id":"` + string(didA) + `","service":[{"id":"#atproto_pds","type":"AtprotoPersonalDataServer","serviceEndpoint":{"uri":"https://pds.test"}}]}`, "", "", nil},
		{"IDMismatch", `{"id":"` + string(didB) + `"}`, "", "", identity.ErrDIDResolutionFailed},
		{"IDMismatchIsSubjectMismatch", `{"id":"` + string(didB) + `"}`, "", "", identity.ErrSubjectMismatch},
		{"IDMismatchCaseSensitive", `{"id":"` + strings.ToUpper(string(didA)) + `"}`, "", "", identity.ErrSubjectMismatch},
		{"NotJSON", `<html>`, "", "", identity.ErrDIDResolutionFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := identity.ParseDocument(didA, []byte(tc.doc))
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				// Only a document for another DID is a subject mismatch.
				if mismatch := strings.HasPrefix(tc.name, "IDMismatch"); errors.Is(err, identity.ErrSubjectMismatch) != mismatch {
					t.Fatalf("errors.Is(%v, ErrSubjectMismatch) = %v, want %v", err, !mismatch, mismatch)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if id.DeclaredHandle != tc.declared || id.PDS != tc.pds {
				t.Fatalf("got declared %q pds %q, want %q %q", id.DeclaredHandle, id.PDS, tc.declared, tc.pds)
			}
		})
	}
}

func TestVerifiedHandle(t *testing.T) {
	// The seed's order: nil, then subject, then handle.
	for _, tc := range []struct {
		name string
		id   *identity.Identity
		want error
	}{
		{"Nil", nil, identity.ErrHandleUnverified},
		{"SubjectMismatchBeforeHandle", &identity.Identity{DID: didB, Handle: identity.HandleInvalid}, identity.ErrSubjectMismatch},
		{"SubjectCaseSensitive", &identity.Identity{DID: identity.DID(strings.ToUpper(string(didA))), Handle: "a.test"}, identity.ErrSubjectMismatch},
		{"EmptyHandle", &identity.Identity{DID: didA}, identity.ErrHandleUnverified},
		{"InvalidHandle", &identity.Identity{DID: didA, Handle: identity.HandleInvalid}, identity.ErrHandleUnverified},
		{"Verified", &identity.Identity{DID: didA, Handle: "a.test"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := identity.VerifiedHandle(tc.id, didA)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if tc.want == nil && h != "a.test" {
				t.Fatalf("handle = %q", h)
			}
		})
	}
}

func TestResolverLookupDID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type setup func(n *identitytest.Network)
	for _, tc := range []struct {
		name       string
		did        identity.DID
		setup      setup
		wantHandle identity.Handle
		wantErr    error
		wantWKHits int // for alice.bridge.test; -1 = do not check
	}{
		{"WellKnownBothWays", didA, func(n *identitytest.Network) { n.Claim(string(didA), "alice.bridge.test", bridge) }, "alice.bridge.test", nil, 1},
		{"DNSFirstSkipsWellKnown", didA, func(n *identitytest.Network) {
			n.SetDocument(string(didA), identitytest.Doc(string(didA), "alice.bridge.test", bridge))
			n.DNS.Claim("alice.bridge.test", string(didA))
			n.SetWellKnown("alice.bridge.test", string(didB)) // must not be consulted
		}, "alice.bridge.test", nil, 0},
		{"DNSServfailFallsBackToWellKnown", didA, func(n *identitytest.Network) {
			n.Claim(string(didA), "alice.bridge.test", bridge)
			n.DNS.Fail("alice.bridge.test")
		}, "alice.bridge.test", nil, 1},
		{"OneWayClaimUnverified", didA, func(n *identitytest.Network) { n.ClaimOneWay(string(didA), "alice.bridge.test", bridge) }, identity.HandleInvalid, nil, 1},
		{"ImpersonationUnverified", didB, func(n *identitytest.Network) {
			n.Claim(string(didA), "alice.bridge.test", bridge)
			n.SetDocument(string(didB), identitytest.Doc(string(didB), "alice.bridge.test", bridge))
		}, identity.HandleInvalid, nil, 1},
		{"TXTNamesOtherDID", didB, func(n *identitytest.Network) {
			n.SetDocument(string(didB), identitytest.Doc(string(didB), "alice.bridge.test", bridge))
			n.DNS.Claim("alice.bridge.test", string(didA))
		}, identity.HandleInvalid, nil, 0},
		{"WellKnownFailsUnverified", didA, func(n *identitytest.Network) {
			n.Claim(string(didA), "alice.bridge.test", bridge)
			n.FailWellKnown("alice.bridge.test", http.StatusInternalServerError)
		}, identity.HandleInvalid, nil, 1},
		{"WellKnownOversized", didA, func(n *identitytest.Network) {
			n.SetDocument(string(didA), identitytest.Doc(string(didA), "alice.bridge.test", bridge))
			n.SetWellKnown("alice.bridge.test", string(didA)+strings.Repeat(" ", 2000))
		}, identity.HandleInvalid, nil, 1},
		{"WellKnownWhitespaceTrimmed", didA, func(n *identitytest.Network) {
			n.SetDocument(string(didA), identitytest.Doc(string(didA), "alice.bridge.test", bridge))
			n.SetWellKnown("alice.bridge.test", "\n "+string(didA)+"\r\n")
		}, "alice.bridge.test", nil, 1},
		{"UpperCaseClaimLowered", didA, func(n *identitytest.Network) {
			n.SetDocument(string(didA), identitytest.Doc(string(didA), "Alice.Bridge.Test", bridge))
			n.SetWellKnown("alice.bridge.test", string(didA))
		}, "alice.bridge.test", nil, 1},
		{"ReservedTLDNotResolved", didA, func(n *identitytest.Network) {
			n.SetDocument(string(didA), identitytest.Doc(string(didA), "alice.local", bridge))
			n.SetWellKnown("alice.local", string(didA))
		}, identity.HandleInvalid, nil, 0},
		{"NoHandleDeclared", didA, func(n *identitytest.Network) { n.SetDocument(string(didA), identitytest.Doc(string(didA), "", bridge)) }, identity.HandleInvalid, nil, 0},
		{"PLCNotFound", didA, func(n *identitytest.Network) {}, "", identity.ErrDIDNotFound, -1},
		{"PLCServerError", didA, func(n *identitytest.Network) {
			n.Claim(string(didA), "alice.bridge.test", bridge)
			n.FailPLC(string(didA), http.StatusInternalServerError)
		}, "", identity.ErrDIDResolutionFailed, -1},
		{"PLCOversized", didA, func(n *identitytest.Network) {
			doc := identitytest.Doc(string(didA), "alice.bridge.test", bridge)
			n.SetDocument(string(didA), append(doc[:len(doc)-1], []byte(`,"pad":"`+strings.Repeat("x", 1<<20)+`"}`)...))
		}, "", identity.ErrDocumentTooLarge, -1},
		{"DocumentForAnotherDID", didA, func(n *identitytest.Network) {
			n.SetDocument(string(didA), identitytest.Doc(string(didB), "alice.bridge.test", bridge))
		}, "", identity.ErrDIDResolutionFailed, -1},
		{"DIDWeb", "did:web:feed.bridge.test", func(n *identitytest.Network) {
			n.Claim("did:web:feed.bridge.test", "feed.bridge.test", bridge)
		}, "feed.bridge.test", nil, -1},
		{"InvalidDID", "did:key:z6Mk", func(n *identitytest.Network) {}, "", identity.ErrInvalidDID, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := identitytest.NewNetwork(t)
			tc.setup(n)
			id, err := n.Resolver(t).LookupDID(ctx, tc.did)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				// Only a document for another DID is a subject mismatch.
				if mismatch := tc.name == "DocumentForAnotherDID"; errors.Is(err, identity.ErrSubjectMismatch) != mismatch {
					t.Fatalf("errors.Is(%v, ErrSubjectMismatch) = %v, want %v", err, !mismatch, mismatch)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if id.Handle != tc.wantHandle || id.DID != tc.did {
				t.Fatalf("identity = %+v, want handle %q", id, tc.wantHandle)
			}
			if tc.wantWKHits >= 0 {
				if got := n.WellKnownHits("alice.bridge.test") + n.WellKnownHits("alice.local"); got != tc.wantWKHits {
					t.Fatalf("well-known hits = %d, want %d", got, tc.wantWKHits)
				}
			}
		})
	}
}

func TestResolverResolveHandleErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n := identitytest.NewNetwork(t)
	r := n.Resolver(t)
	// NXDOMAIN and 404: authoritative "no such handle".
	if _, err := r.ResolveHandle(ctx, "nobody.bridge.test"); !errors.Is(err, identity.ErrHandleNotFound) {
		t.Fatalf("NXDOMAIN+404: err = %v", err)
	}
	// SERVFAIL and 404: not authoritative, so not "not found".
	n.DNS.Fail("flaky.bridge.test")
	_, err := r.ResolveHandle(ctx, "flaky.bridge.test")
	if !errors.Is(err, identity.ErrHandleResolutionFailed) || errors.Is(err, identity.ErrHandleNotFound) {
		t.Fatalf("SERVFAIL+404: err = %v", err)
	}
	// Two TXT records naming different DIDs are ambiguous.
	n.DNS.SetTXT("two.bridge.test", "did="+string(didA), "did="+string(didB))
	if _, err := r.ResolveHandle(ctx, "two.bridge.test"); !errors.Is(err, identity.ErrHandleResolutionFailed) {
		t.Fatalf("two DIDs: err = %v", err)
	}
	// Non-did TXT records are ignored.
	n.DNS.SetTXT("mixed.bridge.test", "v=spf1 -all", "did="+string(didA))
	if got, err := r.ResolveHandle(ctx, "mixed.bridge.test"); err != nil || got != didA {
		t.Fatalf("mixed = %q, %v", got, err)
	}
	for _, h := range []identity.Handle{identity.HandleInvalid, "x.onion", ""} {
		if _, err := r.ResolveHandle(ctx, h); !errors.Is(err, identity.ErrHandleNotResolvable) {
			t.Fatalf("%q: err = %v", h, err)
		}
	}
	if n.TotalHits() != 3 {
		t.Fatalf("listener hits = %d, want 3 (well-known fallbacks of nobody, flaky and two)", n.TotalHits())
	}
}

func TestResolverDeadlineSurfaces(t *testing.T) {
	// A deadline hit while verifying the handle must be an error, not a
	// quiet handle.invalid: the debounce needs to see it.
	t.Parallel()
	n := identitytest.NewNetwork(t)
	n.Claim(string(didA), "alice.bridge.test", bridge)
	n.Delay("alice.bridge.test", 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := n.Resolver(t).LookupDID(ctx, didA)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
}

func TestResolverGuardRefusesLoopbackByDefault(t *testing.T) {
	// Without the test-only allowance, the guarded client refuses the
	// loopback listener: resolution really goes through the guard.
	t.Parallel()
	n := identitytest.NewNetwork(t)
	n.Claim(string(didA), "alice.bridge.test", bridge)
	c, err := client.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := identity.NewResolver(c, n.DNS, n.ResolverConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.LookupDID(context.Background(), didA); !errors.Is(err, client.ErrBlocked) {
		t.Fatalf("err = %v, want ErrBlocked", err)
	}
}

func TestNewResolverValidates(t *testing.T) {
	c, _ := client.New(nil)
	if _, err := identity.NewResolver(c, nil, nil); err == nil {
		t.Fatal("nil TXT resolver accepted")
	}
	if _, err := identity.NewResolver(nil, identitytest.NewDNS(), nil); err == nil {
		t.Fatal("nil client accepted")
	}
	if _, err := identity.NewResolver(c, identitytest.NewDNS(), &identity.ResolverConfig{PLCURL: "ftp://plc"}); err == nil {
		t.Fatal("bad PLC URL accepted")
	}
}
