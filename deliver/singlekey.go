package deliver

import (
	"context"
	"crypto"
	"fmt"
)

var (
	_ SenderKeys = SingleKey{}
	_ SenderKeys = SenderKeysFunc(nil)
)

// SingleKey is the SenderKeys of an application that signs with one key,
// such as a single-actor server or a relay: Signer for KeyID, nothing else.
// Its sender is never gone.
type SingleKey struct {
	// KeyID is the key's id, "https://social.example/actor#main-key".
	KeyID string
	// Signer is the private key.
	Signer crypto.Signer
}

// Key implements SenderKeys.
func (k SingleKey) Key(_ context.Context, keyID string) (crypto.Signer, error) {
	if keyID != k.KeyID || k.Signer == nil {
		return nil, fmt.Errorf("deliver: no key %q", keyID)
	}
	return k.Signer, nil
}

// Gone implements SenderKeys.
func (SingleKey) Gone(context.Context, string) (bool, error) { return false, nil }

// SenderKeysFunc adapts a key lookup to SenderKeys, for senders that are
// never gone.
type SenderKeysFunc func(ctx context.Context, keyID string) (crypto.Signer, error)

// Key calls f.
func (f SenderKeysFunc) Key(ctx context.Context, keyID string) (crypto.Signer, error) {
	return f(ctx, keyID)
}

// Gone implements SenderKeys: never.
func (SenderKeysFunc) Gone(context.Context, string) (bool, error) { return false, nil }
