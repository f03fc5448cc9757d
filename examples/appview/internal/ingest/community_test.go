package ingest

import (
	"context"
	"errors"
	"testing"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
)

func TestValidateCommunityHandle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		h    identity.Handle
		ok   bool
	}{
		{"bridged community", "news.lemmy.world.ap.tdpl.io", true},
		{"native community", "c-nba.coves.social", true},
		{"upper case is parsed", "News.Coves.Social", true},
		{"bare registrable domain", "coves.social", false},
		{"under a multi-label public suffix only", "example.co.uk", false},
		{"below a multi-label public suffix", "c.example.co.uk", true},
		{"handle.invalid", identity.HandleInvalid, false},
		{"empty", "", false},
		{"not a handle", "no spaces.coves.social", false},
		{"single label", "localhost", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateCommunityHandle(tc.h)
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrCommunityHandle)) {
				t.Fatalf("ValidateCommunityHandle(%q) = %v, want ok=%v", tc.h, err, tc.ok)
			}
		})
	}
}

func TestHostedByCheck(t *testing.T) {
	t.Parallel()
	const (
		webBridge = identity.DID("did:web:ap.tdpl.io")
		webEvil   = identity.DID("did:web:tdpl.evil.test")
		plcInst   = identity.DID("did:plc:iiiiiiiiiiiiiiiiiiiiiiii")
		plcBroken = identity.DID("did:plc:jjjjjjjjjjjjjjjjjjjjjjjj")
		plcOther  = identity.DID("did:plc:kkkkkkkkkkkkkkkkkkkkkkkk")
		missing   = identity.DID("did:web:gone.tdpl.io")
		flaky     = identity.DID("did:web:flaky.tdpl.io")
		impostor  = identity.DID("did:web:impostor.tdpl.io")
	)
	res := identitytest.NewResolver()
	res.Set(identity.Identity{DID: webBridge, Handle: identity.HandleInvalid})
	res.Set(identity.Identity{DID: webEvil, Handle: identity.HandleInvalid})
	res.Set(identity.Identity{DID: plcInst, Handle: "instance.tdpl.io", DeclaredHandle: "instance.tdpl.io"})
	res.Set(identity.Identity{DID: plcBroken, Handle: identity.HandleInvalid, DeclaredHandle: "instance.tdpl.io"})
	res.Set(identity.Identity{DID: plcOther, Handle: "instance.other.test", DeclaredHandle: "instance.other.test"})
	res.SetErr(flaky, errors.New("connection reset"))
	res.SetFor(impostor, identity.Identity{DID: webBridge})
	c := HostedBy{Resolver: res}
	const (
		ok       = "ok"
		mismatch = "mismatch"
		pending  = "pending"
	)
	tests := []struct {
		name     string
		hostedBy identity.DID
		handle   identity.Handle
		want     string
	}{
		{"did:web in the handle's registrable domain", webBridge, "news.lemmy.world.ap.tdpl.io", ok},
		{"survives the bridge's rename", webBridge, "news.lemmy-world.tdpl.io", ok},
		{"did:web in another registrable domain", webEvil, "news.lemmy.world.ap.tdpl.io", mismatch},
		{"handle moved to another domain", webBridge, "news.evil.test", mismatch},
		{"did:plc instance by its verified handle", plcInst, "news.lemmy.world.ap.tdpl.io", ok},
		{"did:plc instance elsewhere", plcOther, "news.lemmy.world.ap.tdpl.io", mismatch},
		{"did:plc instance handle unverified is retried", plcBroken, "news.lemmy.world.ap.tdpl.io", pending},
		{"instance DID not found", missing, "news.lemmy.world.ap.tdpl.io", mismatch},
		{"instance fetch failure is retried", flaky, "news.lemmy.world.ap.tdpl.io", pending},
		{"instance document names another DID", impostor, "news.lemmy.world.ap.tdpl.io", mismatch},
		{"malformed hosted-by DID", "did:example:x", "news.lemmy.world.ap.tdpl.io", mismatch},
		{"handle with no registrable domain", webBridge, "co.uk", mismatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := c.Check(context.Background(), tc.hostedBy, tc.handle)
			got := ok
			switch {
			case errors.Is(err, identity.ErrHostedByMismatch):
				got = mismatch
			case err != nil:
				got = pending
			}
			if got != tc.want {
				t.Fatalf("Check = %v (%s), want %s", err, got, tc.want)
			}
		})
	}
}
