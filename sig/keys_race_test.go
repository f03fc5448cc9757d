package sig_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"sync"
	"testing"

	"github.com/fedkit/fedkit/sig"
)

// NewSigner must not write to the caller's key: other goroutines may be
// signing with it. Under -race a write here is reported.
func TestNewSignerLeavesSharedKeyAlone(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	key.Precomputed = rsa.PrecomputedValues{}
	digest := sha256.Sum256([]byte("x"))
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, err := sig.NewSigner(key, "https://example.com/actor#main-key", nil); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, digest[:]); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if key.Precomputed.Dp != nil {
		t.Fatal("NewSigner precomputed the caller's key in place")
	}
}
