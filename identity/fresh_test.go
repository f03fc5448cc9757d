package identity_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
	"github.com/fedkit/fedkit/origin"
)

// TestAdmitThroughHTTPResolver runs origin's admission on identity's fresh
// resolver over the offline network.
func TestAdmitThroughHTTPResolver(t *testing.T) {
	t.Parallel()
	asserted := origin.Fields{Origin: "lemmy.world", Username: "alice", URL: "https://lemmy.world/u/alice", Software: "lemmy"}
	for _, tc := range []struct {
		name  string
		setup func(n *identitytest.Network)
		known bool
		want  origin.Outcome
	}{
		{"Bridged", func(n *identitytest.Network) { n.Claim(string(didA), "alice.lemmy.world.ap.bridge.test", bridge) }, true, origin.OutcomeAdmit},
		{"HandleOutsideBridgeDomain", func(n *identitytest.Network) { n.Claim(string(didA), "alice.elsewhere.test", bridge) }, true, origin.OutcomeClear},
		{"UntrustedPDSUnknownUser", func(n *identitytest.Network) {
			n.Claim(string(didA), "alice.bridge.test", "https://pds.elsewhere.test")
		}, false, origin.OutcomeDrop},
		{"OneWayHandleRetries", func(n *identitytest.Network) { n.ClaimOneWay(string(didA), "alice.bridge.test", bridge) }, true, origin.OutcomeRetry},
		{"Impersonation", func(n *identitytest.Network) {
			n.SetDocument(string(didA), identitytest.Doc(string(didA), "bob.bridge.test", bridge))
			n.SetWellKnown("bob.bridge.test", string(didB))
		}, true, origin.OutcomeRetry},
		{"PLCOutageRetries", func(n *identitytest.Network) { n.FailPLC(string(didA), http.StatusBadGateway) }, true, origin.OutcomeRetry},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := identitytest.NewNetwork(t)
			tc.setup(n)
			fresh, err := identity.NewOriginResolver(n.Resolver(t))
			if err != nil {
				t.Fatal(err)
			}
			adm, err := origin.NewAdmitter(fresh, &origin.AdmitConfig{TrustedHosts: []string{"pds.bridge.test"}})
			if err != nil {
				t.Fatal(err)
			}
			d := adm.Admit(context.Background(), origin.Event{DID: string(didA), Fields: asserted, Known: tc.known})
			if d.Outcome != tc.want {
				t.Fatalf("outcome = %v (%s, %v), want %v", d.Outcome, d.Reason, d.Err, tc.want)
			}
		})
	}
}

func TestResolveFreshErrors(t *testing.T) {
	t.Parallel()
	n := identitytest.NewNetwork(t)
	r := n.Resolver(t)
	ctx := context.Background()
	// Not found and invalid documents are lasting; a 5xx is transient.
	if _, err := r.ResolveFresh(ctx, string(didA)); !errors.Is(err, origin.ErrUnresolvable) {
		t.Fatalf("not found: %v", err)
	}
	n.SetDocument(string(didB), []byte(`{"id":"did:plc:zzzzzzzzzzzzzzzzzzzzzzzz"}`))
	if _, err := r.ResolveFresh(ctx, string(didB)); !errors.Is(err, origin.ErrUnresolvable) {
		t.Fatalf("invalid doc: %v", err)
	}
	if _, err := r.ResolveFresh(ctx, "did:key:z"); !errors.Is(err, origin.ErrUnresolvable) {
		t.Fatalf("invalid DID: %v", err)
	}
	n.Claim(string(identitytest.DIDCarol), "carol.bridge.test", bridge)
	n.FailPLC(string(identitytest.DIDCarol), http.StatusServiceUnavailable)
	if _, err := r.ResolveFresh(ctx, string(identitytest.DIDCarol)); err == nil || errors.Is(err, origin.ErrUnresolvable) {
		t.Fatalf("outage: %v, want transient", err)
	}
	n.FailPLC(string(identitytest.DIDCarol), 0)
	res, err := r.ResolveFresh(ctx, string(identitytest.DIDCarol))
	if err != nil || res != (origin.Resolution{DID: string(identitytest.DIDCarol), Handle: "carol.bridge.test", PDS: bridge, HandleDID: string(identitytest.DIDCarol)}) {
		t.Fatalf("resolution = %+v, %v", res, err)
	}
}

func TestNewOriginResolver(t *testing.T) {
	fake := identitytest.NewResolver()
	fake.Set(ident(didA, "alice.bridge.test", bridge))
	fake.Set(ident(didB, identity.HandleInvalid, bridge))
	fresh, err := identity.NewOriginResolver(fake)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if res, err := fresh.ResolveFresh(ctx, string(didA)); err != nil || res.HandleDID != string(didA) || res.Handle != "alice.bridge.test" {
		t.Fatalf("verified: %+v, %v", res, err)
	}
	if res, err := fresh.ResolveFresh(ctx, string(didB)); err != nil || res.HandleDID != "" {
		t.Fatalf("unverified: %+v, %v", res, err)
	}
	if _, err := fresh.ResolveFresh(ctx, string(identitytest.DIDCarol)); !errors.Is(err, origin.ErrUnresolvable) {
		t.Fatalf("not found: %v", err)
	}
	c, _ := identity.NewCache(fake, nil, nil)
	if _, err := identity.NewOriginResolver(c); err == nil {
		t.Fatal("cache accepted for admission")
	}
	if _, err := identity.NewOriginResolver(nil); err == nil {
		t.Fatal("nil accepted")
	}
}
