package sig_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-fed/httpsig"

	"github.com/fedkit/fedkit/sig"
)

// Benchmarks time our whole operation and, interleaved in the same loop,
// the bare primitive it cannot avoid (RSA PKCS#1 v1.5 or Ed25519 over the
// SHA-256 of a signing string of the same size), and report
// overhead_ratio = ours / bare. ours_allocs is measured alone; for
// verification it includes the primitive's own allocations and the two
// of handing over a fresh request body.

var benchBody = []byte(`{"@context":"https://www.w3.org/ns/activitystreams","id":"https://a.example/activities/1","type":"Create","actor":"https://a.example/actor","object":{"type":"Note","content":"` + strings.Repeat("x", 800) + `"}}`)

// bareString is about the size of the strings we sign.
var bareString = []byte(`"@method": POST
"@target-uri": https://b.example/inbox
"@authority": b.example
"date": Wed, 05 Aug 2026 12:34:56 GMT
"content-digest": sha-256=:nMqxyjnxJRsYFc3ao3rHES02EXcNrSLyC7b/8bP7kTI=:
"@signature-params": ("@method" "@target-uri" "@authority" "date" "content-digest");keyid="https://a.example/actor#main-key";alg="rsa-v1_5-sha256";created=1785933296`)

func ratio(b *testing.B, bare, ours func()) {
	b.Helper()
	allocs := testing.AllocsPerRun(20, ours)
	// Per-iteration times, interleaved, so both sides see the same load;
	// the ratio of medians resists the spikes of a shared machine.
	tb := make([]time.Duration, b.N)
	to := make([]time.Duration, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		bare()
		tb[i] = time.Since(t)
		t = time.Now()
		ours()
		to[i] = time.Since(t)
	}
	b.StopTimer()
	mb, mo := median(tb), median(to)
	b.ReportMetric(float64(mo)/float64(mb), "overhead_ratio")
	b.ReportMetric(float64(mo.Nanoseconds()), "ours_ns/op")
	b.ReportMetric(float64(mb.Nanoseconds()), "bare_ns/op")
	b.ReportMetric(allocs, "ours_allocs/op")
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

func bareRSASign(k *rsa.PrivateKey) func() {
	return func() {
		h := sha256.Sum256(bareString)
		if _, err := rsa.SignPKCS1v15(nil, k, crypto.SHA256, h[:]); err != nil {
			panic(err)
		}
	}
}

func bareRSAVerify(k *rsa.PrivateKey) func() {
	h := sha256.Sum256(bareString)
	s, _ := rsa.SignPKCS1v15(nil, k, crypto.SHA256, h[:])
	return func() {
		h := sha256.Sum256(bareString)
		if rsa.VerifyPKCS1v15(&k.PublicKey, crypto.SHA256, h[:], s) != nil {
			panic("bad")
		}
	}
}

func benchReq() *http.Request {
	req, _ := http.NewRequest(http.MethodPost, "https://b.example/inbox", bytes.NewReader(benchBody))
	return req
}

func benchSign(b *testing.B, key crypto.Signer, bare func()) {
	for _, scheme := range []sig.Scheme{sig.SchemeCavage, sig.SchemeRFC9421} {
		b.Run(scheme.String(), func(b *testing.B) {
			s, err := sig.NewSigner(key, keyID, nil)
			if err != nil {
				b.Fatal(err)
			}
			ratio(b, bare, func() {
				if err := s.Sign(benchReq(), scheme); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

func benchVerify(b *testing.B, key crypto.Signer, bare func()) {
	for _, scheme := range []sig.Scheme{sig.SchemeCavage, sig.SchemeRFC9421} {
		b.Run(scheme.String(), func(b *testing.B) {
			s, _ := sig.NewSigner(key, keyID, nil)
			out := benchReq()
			if err := s.Sign(out, scheme); err != nil {
				b.Fatal(err)
			}
			in := httptest.NewRequest(out.Method, out.URL.String(), bytes.NewReader(benchBody))
			in.Header = out.Header
			k := &sig.Key{Public: key.Public(), Owner: actor}
			v, _ := sig.NewVerifier(sig.KeyResolverFunc(func(context.Context, sig.KeyID) (*sig.Key, error) { return k, nil }), nil)
			ratio(b, bare, func() {
				// A fresh body each time, as a server hands it over, so
				// the read and the digest are measured every time.
				in.Body, in.GetBody = io.NopCloser(bytes.NewReader(benchBody)), nil
				if _, err := v.Verify(in); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

func BenchmarkSignRSA(b *testing.B) {
	k := testRSAKey(b)
	benchSign(b, k, bareRSASign(k))
}

func BenchmarkVerifyRSA(b *testing.B) {
	k := testRSAKey(b)
	benchVerify(b, k, bareRSAVerify(k))
}

func BenchmarkSignEd25519(b *testing.B) {
	_, k, _ := ed25519.GenerateKey(rand.Reader)
	benchSign(b, k, func() { ed25519.Sign(k, bareString) })
}

func BenchmarkVerifyEd25519(b *testing.B) {
	pub, k, _ := ed25519.GenerateKey(rand.Reader)
	s := ed25519.Sign(k, bareString)
	benchVerify(b, k, func() {
		if !ed25519.Verify(pub, bareString, s) {
			panic("bad")
		}
	})
}

// BenchmarkGoFed measures go-fed/httpsig on the same machine and inputs,
// for comparison (cavage only; it has no RFC 9421).
func BenchmarkGoFed(b *testing.B) {
	k := testRSAKey(b)
	headers := []string{httpsig.RequestTarget, "host", "date", "digest"}
	signer, _, err := httpsig.NewSigner([]httpsig.Algorithm{httpsig.RSA_SHA256}, httpsig.DigestSha256, headers, httpsig.Signature, 0)
	if err != nil {
		b.Fatal(err)
	}
	sign := func() *http.Request {
		req := benchReq()
		req.Header.Set("Host", "b.example")
		req.Header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
		if err := signer.SignRequest(k, keyID, req, benchBody); err != nil {
			b.Fatal(err)
		}
		return req
	}
	b.Run("SignRSA", func(b *testing.B) { ratio(b, bareRSASign(k), func() { sign() }) })
	b.Run("VerifyRSA", func(b *testing.B) {
		req := sign()
		ratio(b, bareRSAVerify(k), func() {
			v, err := httpsig.NewVerifier(req)
			if err != nil {
				b.Fatal(err)
			}
			if err := v.Verify(&k.PublicKey, httpsig.RSA_SHA256); err != nil {
				b.Fatal(err)
			}
		})
	})
}
