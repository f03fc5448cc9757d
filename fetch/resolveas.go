package fetch

import "context"

// ResolveAs resolves a handle ("alice@social.example", "@alice@...",
// "acct:...") as Resolve does and fetches its actor as LookupAs does: the
// one call that turns what a user types into the actor to follow or
// mention.
func ResolveAs[T any](ctx context.Context, f *Fetcher, handle string) (T, *Document, error) {
	r, err := f.Resolve(ctx, handle)
	if err != nil {
		var zero T
		return zero, nil, err
	}
	return LookupAs[T](ctx, f, r.Actor)
}
