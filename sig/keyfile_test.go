package sig_test

import (
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fedkit/fedkit/sig"
)

func TestLoadOrGenerateKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "actor.pem")
	k1, err := sig.LoadOrGenerateKey(path, sig.KeyRSA2048)
	if err != nil {
		t.Fatal(err)
	}
	if rk, ok := k1.(*rsa.PrivateKey); !ok || rk.N.BitLen() != 2048 {
		t.Fatalf("generated %T", k1)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v; want 0600", st.Mode().Perm(), err)
	}
	k2, err := sig.LoadOrGenerateKey(path, sig.KeyRSA2048)
	if err != nil || !k2.(*rsa.PrivateKey).Equal(k1) {
		t.Fatalf("second call: %v; want the same key loaded", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files left in the directory; want 1", len(entries))
	}

	t.Run("world-readable refused", func(t *testing.T) {
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := sig.LoadOrGenerateKey(path, sig.KeyRSA2048); !errors.Is(err, sig.ErrKeyFileMode) {
			t.Fatalf("err = %v; want ErrKeyFileMode", err)
		}
	})
	t.Run("garbage is not replaced", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "bad.pem")
		if err := os.WriteFile(p, []byte("not a key"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := sig.LoadOrGenerateKey(p, sig.KeyEd25519); !errors.Is(err, sig.ErrMalformed) {
			t.Fatalf("err = %v; want ErrMalformed", err)
		}
		if b, _ := os.ReadFile(p); string(b) != "not a key" {
			t.Fatal("the file was overwritten")
		}
	})
}

func TestLoadOrGenerateKeyConcurrent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ed.pem")
	keys := make([]ed25519.PrivateKey, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := sig.LoadOrGenerateKey(path, sig.KeyEd25519)
			if err != nil {
				t.Error(err)
				return
			}
			keys[i] = k.(ed25519.PrivateKey)
		})
	}
	wg.Wait()
	for _, k := range keys[1:] {
		if !k.Equal(keys[0]) {
			t.Fatal("concurrent callers got different keys")
		}
	}
}
