package relay

import (
	"context"

	"github.com/fedkit/fedkit/sig"
)

type usedKeys struct{ ids []sig.KeyID }

type usedKeysKey struct{}

// noteKeys makes the relay's key resolver record, in ctx, which key IDs it
// resolved, so a failed verification can refetch a key the sender may have
// rotated.
func noteKeys(ctx context.Context) (context.Context, *usedKeys) {
	u := &usedKeys{}
	return context.WithValue(ctx, usedKeysKey{}, u), u
}

func recordKey(ctx context.Context, id sig.KeyID) {
	if u, _ := ctx.Value(usedKeysKey{}).(*usedKeys); u != nil {
		u.ids = append(u.ids, id)
	}
}

// refetchKeys refetches the keys a failed verification used, and reports
// whether any came back, so verifying again can tell. The resolver's rate
// limit keeps a stream of bad signatures to one refetch per key a minute.
func (r *Relay) refetchKeys(ctx context.Context, used *usedKeys) bool {
	again := false
	for _, id := range used.ids {
		if _, err := r.cfg.Keys.RefetchKey(ctx, id); err == nil {
			again = true
		}
	}
	return again
}
