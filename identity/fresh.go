package identity

import (
	"context"
	"errors"
	"fmt"

	"github.com/fedkit/fedkit/origin"
)

// ResolveFresh implements origin.Resolver: the DID document and the
// declared handle's DID, both fetched now, with no cache. A DID that does
// not exist or whose document is invalid wraps origin.ErrUnresolvable; any
// other failure is transient.
func (r *HTTPResolver) ResolveFresh(ctx context.Context, did string) (origin.Resolution, error) {
	d, err := ParseDID(did)
	if err != nil {
		return origin.Resolution{}, fmt.Errorf("%w: %w", origin.ErrUnresolvable, err)
	}
	id, err := r.ResolveDID(ctx, d)
	if err != nil {
		return origin.Resolution{}, freshErr(err)
	}
	res := origin.Resolution{DID: string(id.DID), Handle: string(id.DeclaredHandle), PDS: id.PDS}
	if id.DeclaredHandle.Resolvable() {
		hd, err := r.ResolveHandle(ctx, id.DeclaredHandle)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return origin.Resolution{}, ctxErr
			}
			// Any other handle failure means "did not resolve": origin
			// treats that as unverified, which retries.
		}
		res.HandleDID = string(hd)
	}
	return res, nil
}

func freshErr(err error) error {
	if errors.Is(err, ErrDIDNotFound) || errors.Is(err, ErrInvalidDocument) || errors.Is(err, ErrInvalidDID) {
		return fmt.Errorf("%w: %w", origin.ErrUnresolvable, err)
	}
	return err
}

var _ origin.Resolver = (*HTTPResolver)(nil)

// NewOriginResolver adapts an uncached Resolver for origin.NewAdmitter. An
// *HTTPResolver is returned as it is (it resolves both legs separately);
// any other Resolver is adapted through LookupDID, in which case a handle
// that resolved to another DID reads as not resolved. A *Cache is refused:
// admission must never be decided from a cache.
func NewOriginResolver(r Resolver) (origin.Resolver, error) {
	switch v := r.(type) {
	case nil:
		return nil, errors.New("identity: NewOriginResolver: nil resolver")
	case *Cache:
		return nil, errors.New("identity: NewOriginResolver: resolver must be uncached")
	case *HTTPResolver:
		return v, nil
	}
	return originAdapter{r}, nil
}

type originAdapter struct{ r Resolver }

func (a originAdapter) ResolveFresh(ctx context.Context, did string) (origin.Resolution, error) {
	d, err := ParseDID(did)
	if err != nil {
		return origin.Resolution{}, fmt.Errorf("%w: %w", origin.ErrUnresolvable, err)
	}
	id, err := a.r.LookupDID(ctx, d)
	if err != nil {
		return origin.Resolution{}, freshErr(err)
	}
	res := origin.Resolution{DID: string(id.DID), Handle: string(id.DeclaredHandle), PDS: id.PDS}
	if id.Handle.Resolvable() && id.Handle == id.DeclaredHandle {
		res.HandleDID = string(id.DID)
	}
	return res, nil
}
