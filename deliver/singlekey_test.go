package deliver_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"testing"

	"github.com/fedkit/fedkit/deliver"
)

func TestSingleKey(t *testing.T) {
	t.Parallel()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	const id = "https://a.example/actor#main-key"
	for _, tc := range []struct {
		name string
		keys deliver.SenderKeys
	}{
		{"SingleKey", deliver.SingleKey{KeyID: id, Signer: priv}},
		{"SenderKeysFunc", deliver.SenderKeysFunc(func(_ context.Context, keyID string) (crypto.Signer, error) {
			return deliver.SingleKey{KeyID: id, Signer: priv}.Key(context.Background(), keyID)
		})},
	} {
		ctx := context.Background()
		if k, err := tc.keys.Key(ctx, id); err != nil || !k.(ed25519.PrivateKey).Equal(priv) {
			t.Errorf("%s: Key = %v", tc.name, err)
		}
		if _, err := tc.keys.Key(ctx, id+"2"); err == nil {
			t.Errorf("%s: another key ID resolved", tc.name)
		}
		if gone, err := tc.keys.Gone(ctx, id); gone || err != nil {
			t.Errorf("%s: Gone = %v, %v", tc.name, gone, err)
		}
	}
	if _, err := (deliver.SingleKey{KeyID: id}).Key(context.Background(), id); err == nil {
		t.Error("a SingleKey without a key resolved")
	}
}
