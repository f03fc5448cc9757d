package ldsig_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fedkit/fedkit/internal/fixture"
	"github.com/fedkit/fedkit/sig"
)

// fedify holds the shared Fedify vector: the body as Fedify POSTed it and
// the keys of the actor document that signed it.
type fedify struct {
	body    []byte
	actor   string
	keyID   string
	rsaPub  crypto.PublicKey
	edKeyID string
	edPub   ed25519.PublicKey
}

func loadFedify(t testing.TB) *fedify {
	t.Helper()
	f := &fedify{body: fixture.Shared(t, "ldsig/fedify-create.rsasignature2017.json")}
	var actor struct {
		ID        string `json:"id"`
		PublicKey struct {
			ID  string `json:"id"`
			PEM string `json:"publicKeyPem"`
		} `json:"publicKey"`
		AssertionMethod []struct {
			ID        string `json:"id"`
			Multibase string `json:"publicKeyMultibase"`
		} `json:"assertionMethod"`
	}
	if err := json.Unmarshal(fixture.Shared(t, "ldsig/fedify-actor.json"), &actor); err != nil {
		t.Fatal(err)
	}
	f.actor, f.keyID = actor.ID, actor.PublicKey.ID
	var err error
	if f.rsaPub, err = sig.ParsePublicKeyPEM([]byte(actor.PublicKey.PEM)); err != nil {
		t.Fatal(err)
	}
	f.edKeyID = actor.AssertionMethod[0].ID
	pub, err := sig.ParseMultikey(actor.AssertionMethod[0].Multibase)
	if err != nil {
		t.Fatal(err)
	}
	f.edPub = pub.(ed25519.PublicKey)
	return f
}

// keys resolves one key ID to pub, owned by owner.
func keys(id, owner string, pub crypto.PublicKey) sig.KeyResolver {
	return sig.KeyResolverFunc(func(_ context.Context, k sig.KeyID) (*sig.Key, error) {
		if k.String() != id {
			return nil, fmt.Errorf("no key %q: %w", k, sig.ErrUnknownKey)
		}
		return &sig.Key{Public: pub, Owner: owner}, nil
	})
}

// testKey is the project's own TEST-ONLY RSA-2048 key
// (testdata/directory/testKey.TEST-ONLY.pem).
func testKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixture.Root(), "testdata", "directory", "testKey.TEST-ONLY.pem"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := sig.ParsePrivateKeyPEM(raw)
	if err != nil {
		t.Fatal(err)
	}
	return k.(*rsa.PrivateKey)
}
