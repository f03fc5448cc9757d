package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/origin"
)

// ErrCommunityHandle is wrapped by ValidateCommunityHandle.
var ErrCommunityHandle = errors.New("ingest: handle not allowed for a community")

// ValidateCommunityHandle is the AppView's community handle rule: a valid,
// resolvable handle strictly below its registrable domain, because a
// community is named under the domain of the instance that hosts it
// ("news.lemmy.world.ap.tdpl.io", "c-nba.coves.social"), never by a bare
// registrable domain or a public suffix.
func ValidateCommunityHandle(h identity.Handle) error {
	p, err := identity.ParseHandle(string(h))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCommunityHandle, err)
	}
	if !p.Resolvable() {
		return fmt.Errorf("%w: %s is not resolvable", ErrCommunityHandle, p)
	}
	rd, err := origin.RegistrableDomain(string(p))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCommunityHandle, err)
	}
	if rd == string(p) {
		return fmt.Errorf("%w: %s is a registrable domain, not a name under one", ErrCommunityHandle, p)
	}
	return nil
}

// HostedBy checks a community's hosted-by claim: the DID of the instance
// that hosts it. The claim holds when the instance's domain has the same
// registrable domain as the community's verified handle, which is what
// survives the bridge's rename (old and new handles are both under tdpl.io).
// The instance's domain is the host of a did:web, or the verified handle
// of a did:plc; either way its DID document is fetched, so a claim naming
// an instance that does not exist fails.
type HostedBy struct {
	// Resolver resolves the instance's DID. A caching resolver is fine
	// here: the instance is not the repository being refreshed, and many
	// communities share one instance.
	Resolver identity.Resolver
	// Timeout bounds the instance's resolution. Defaults to
	// identity.ResolveTimeoutDefault.
	Timeout time.Duration
}

// Check verifies that hostedBy hosts a community whose verified handle is
// h. A claim that does not hold wraps identity.ErrHostedByMismatch
// (permanent: the refresh keeps the old handle); a fetch that could not
// complete is any other error (unresolved: redriven).
func (c HostedBy) Check(ctx context.Context, hostedBy identity.DID, h identity.Handle) error {
	mismatch := func(why string) error {
		return fmt.Errorf("%w: %s for %s: %s", identity.ErrHostedByMismatch, hostedBy, h, why)
	}
	if _, err := identity.ParseDID(string(hostedBy)); err != nil {
		return mismatch("invalid DID")
	}
	want, err := origin.RegistrableDomain(string(h))
	if err != nil {
		return mismatch("handle has no registrable domain")
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = identity.ResolveTimeoutDefault
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id, err := c.Resolver.LookupDID(rctx, hostedBy)
	switch {
	case errors.Is(err, identity.ErrDIDNotFound), errors.Is(err, identity.ErrInvalidDocument), errors.Is(err, identity.ErrInvalidDID):
		return mismatch("instance DID does not resolve")
	case err != nil:
		return fmt.Errorf("ingest: hosted-by %s: %w", hostedBy, err)
	case id.DID != hostedBy:
		return mismatch("instance document names another DID")
	}
	var host string
	if hostedBy.Method() == "web" {
		// did:web:<host>; ParseDID allows no port or path.
		host = strings.TrimPrefix(string(hostedBy), "did:web:")
	} else {
		if !id.Handle.Resolvable() {
			// DNS or well-known may be lagging: retry, do not refuse.
			return fmt.Errorf("ingest: hosted-by %s: instance handle not verified", hostedBy)
		}
		host = string(id.Handle)
	}
	got, err := origin.RegistrableDomain(host)
	if err != nil || got != want {
		return mismatch("registrable domains differ")
	}
	return nil
}
