package ldsig_test

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"slices"
	"testing"
	"time"

	"github.com/fedkit/fedkit/sig/ldsig"
)

// BenchmarkVerifyActivity times a whole LD-signature verification and,
// interleaved in the same loop so both see the same machine load, the bare
// RSA PKCS#1 v1.5 SHA-256 verify it contains, and reports
// overhead_ratio = median(ours) / median(bare). The rest is two URDNA2015
// canonicalisations (options and document), the context checks and the
// JSON decoding.
func BenchmarkVerifyActivity(b *testing.B) {
	key := testKey(b)
	mastodon, err := ldsig.Sign([]byte(mastodonBodies[0].body), key, &ldsig.SignOpts{Creator: mKeyID, Created: mCreated})
	if err != nil {
		b.Fatal(err)
	}
	f := loadFedify(b)
	cases := []struct {
		name string
		body []byte
		v    *ldsig.Verifier
		pub  *rsa.PublicKey
	}{
		{"fedify-create", f.body, &ldsig.Verifier{Keys: keys(f.keyID, f.actor, f.rsaPub)}, f.rsaPub.(*rsa.PublicKey)},
		{"mastodon-create", mastodon, &ldsig.Verifier{Keys: keys(mKeyID, mActor, &key.PublicKey)}, &key.PublicKey},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			// The bare verify signs what LD signatures sign: two hex
			// SHA-256 digests, 128 bytes.
			msg := make([]byte, 128)
			h := sha256.Sum256(msg)
			bareSig, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, h[:])
			if err != nil {
				b.Fatal(err)
			}
			bare := func() {
				h := sha256.Sum256(msg)
				if rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, h[:], bareSig) != nil {
					b.Fatal("bare verify failed")
				}
			}
			ours := func() {
				if _, _, err := tc.v.VerifyActivity(context.Background(), tc.body); err != nil {
					b.Fatal(err)
				}
			}
			tb := make([]time.Duration, 0, b.N)
			to := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				t := time.Now()
				bare()
				tb = append(tb, time.Since(t))
				t = time.Now()
				ours()
				to = append(to, time.Since(t))
			}
			b.StopTimer()
			mb, mo := median(tb), median(to)
			b.ReportMetric(float64(mo)/float64(mb), "overhead_ratio")
			b.ReportMetric(float64(mo.Nanoseconds()), "ours_ns/op")
			b.ReportMetric(float64(mb.Nanoseconds()), "bare_ns/op")
		})
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
