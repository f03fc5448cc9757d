package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/sig"
)

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "actor.pem")
	if _, err := loadKey(path, false); err == nil || !strings.Contains(err.Error(), "start the server once") {
		t.Fatalf("missing key without create: %v", err)
	}
	k, err := loadKey(path, true) // first start: generated and persisted
	if err != nil {
		t.Fatal(err)
	}
	if rk, ok := k.(*rsa.PrivateKey); !ok || rk.N.BitLen() != KeyBits {
		t.Fatalf("generated %T", k)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v; want 0600", fi.Mode(), err)
	}
	again, err := loadKey(path, true) // second start: the same key
	if err != nil || !again.Public().(*rsa.PublicKey).Equal(k.Public()) {
		t.Fatalf("reloaded a different key: %v", err)
	}

	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	pemBytes, _ := sig.MarshalPrivateKeyPEM(edKey)
	edPath := filepath.Join(dir, "ed.pem")
	if err := os.WriteFile(edPath, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadKey(edPath, false); err == nil || !strings.Contains(err.Error(), "must be RSA") {
		t.Fatalf("Ed25519 actor key: %v; want refused", err)
	}
	if err := os.WriteFile(edPath, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadKey(edPath, true); err == nil {
		t.Fatal("garbage key accepted")
	}
}
