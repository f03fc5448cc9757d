package ingest

import (
	"context"
	"errors"
	"fmt"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/origin"
)

// FreshResolver adapts an uncached identity.Resolver to origin.Resolver,
// for admission. It must never be given a caching resolver.
type FreshResolver struct {
	Resolver identity.Resolver
}

var _ origin.Resolver = FreshResolver{}

// ResolveFresh resolves did and reports the declared handle, the PDS and
// the DID the handle resolved back to (set only when it verified). A DID
// that does not exist, or is not a DID, is origin.ErrUnresolvable.
func (f FreshResolver) ResolveFresh(ctx context.Context, did string) (origin.Resolution, error) {
	d, err := identity.ParseDID(did)
	if err != nil {
		return origin.Resolution{}, fmt.Errorf("%w: %w", origin.ErrUnresolvable, err)
	}
	id, err := f.Resolver.LookupDID(ctx, d)
	if err != nil {
		if errors.Is(err, identity.ErrDIDNotFound) || errors.Is(err, identity.ErrInvalidDID) {
			return origin.Resolution{}, fmt.Errorf("%w: %w", origin.ErrUnresolvable, err)
		}
		return origin.Resolution{}, err
	}
	res := origin.Resolution{DID: string(id.DID), Handle: string(id.DeclaredHandle), PDS: id.PDS}
	if !id.Handle.IsZero() && id.Handle != identity.HandleInvalid && id.Handle == id.DeclaredHandle {
		res.HandleDID = string(id.DID)
	}
	return res, nil
}
