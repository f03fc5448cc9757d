package relay

import (
	"context"
	"net/url"

	"github.com/fedkit/fedkit/sig"
)

// allowedKeys resolves the inbox's signature keys through Config.Keys,
// refusing with errBlocked, before any request, a key on a domain the
// domain lists refuse. As an inbox.KeyRefetcher it lets the inbox fetch a
// key again after a signature failed with it (the sender may have rotated
// it); the resolver's rate limit keeps a stream of bad signatures to one
// refetch per key a minute.
type allowedKeys struct{ r *Relay }

func (k allowedKeys) ResolveKey(ctx context.Context, id sig.KeyID) (*sig.Key, error) {
	if !k.allowed(id) {
		return nil, errBlocked
	}
	return k.r.cfg.Keys.ResolveKey(ctx, id)
}

func (k allowedKeys) RefetchKey(ctx context.Context, id sig.KeyID) (*sig.Key, error) {
	if !k.allowed(id) {
		return nil, errBlocked
	}
	return k.r.cfg.Keys.RefetchKey(ctx, id)
}

func (k allowedKeys) allowed(id sig.KeyID) bool {
	u, err := url.Parse(id.String())
	return err == nil && k.r.hostAllowed(u.Host)
}
