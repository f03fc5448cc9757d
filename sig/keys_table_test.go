package sig_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/sig"
)

func pemOf(typ string, der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
}

func TestParseKeysPEM(t *testing.T) {
	t.Parallel()
	rsaKey := testRSAKey(t)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	pkcs8 := func(k any) []byte { b, _ := x509.MarshalPKCS8PrivateKey(k); return b }
	spki := func(k any) []byte { b, _ := x509.MarshalPKIXPublicKey(k); return b }
	sec1, _ := x509.MarshalECPrivateKey(ec)
	// PKCS#8 and SPKI under id-RSASSA-PSS, as RFC 9421's test-key-rsa-pss.
	pss := pkix.AlgorithmIdentifier{Algorithm: asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 10}}
	other := pkix.AlgorithmIdentifier{Algorithm: asn1.ObjectIdentifier{1, 2, 3, 4}}
	pssPKCS8 := func(algo pkix.AlgorithmIdentifier, inner []byte) []byte {
		b, err := asn1.Marshal(struct {
			Version    int
			Algo       pkix.AlgorithmIdentifier
			PrivateKey []byte
		}{0, algo, inner})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pssSPKI := func(algo pkix.AlgorithmIdentifier, inner []byte) []byte {
		b, err := asn1.Marshal(struct {
			Algo      pkix.AlgorithmIdentifier
			PublicKey asn1.BitString
		}{algo, asn1.BitString{Bytes: inner, BitLength: 8 * len(inner)}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	priv := []struct {
		name, pem string
		want      error
	}{
		{"rsa pkcs1", pemOf("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey)), nil},
		{"rsa pkcs8", pemOf("PRIVATE KEY", pkcs8(rsaKey)), nil},
		{"ed25519 pkcs8", pemOf("PRIVATE KEY", pkcs8(ed)), nil},
		{"ecdsa p-256 pkcs8", pemOf("PRIVATE KEY", pkcs8(ec)), nil},
		{"ecdsa p-256 sec1", pemOf("EC PRIVATE KEY", sec1), nil},
		{"rsa-pss pkcs8 (RFC 9421 B.1.2)", rfcKeyRSAPSSPrivate, nil},
		{"rsa-pss pkcs8", pemOf("PRIVATE KEY", pssPKCS8(pss, x509.MarshalPKCS1PrivateKey(rsaKey))), nil},
		{"rsa-pss pkcs8 with a broken key", pemOf("PRIVATE KEY", pssPKCS8(pss, []byte{1, 2, 3})), sig.ErrMalformed},
		{"unknown pkcs8 algorithm", pemOf("PRIVATE KEY", pssPKCS8(other, x509.MarshalPKCS1PrivateKey(rsaKey))), sig.ErrMalformed},
		{"ecdsa p-384 refused", pemOf("PRIVATE KEY", pkcs8(ec384)), sig.ErrUnsupportedKey},
		{"public key given", pemOf("PUBLIC KEY", spki(ed.Public())), sig.ErrUnsupportedKey},
		{"garbage DER", pemOf("PRIVATE KEY", []byte{1, 2, 3}), sig.ErrMalformed},
		{"not PEM", "hello", sig.ErrMalformed},
	}
	for _, tc := range priv {
		t.Run("private/"+tc.name, func(t *testing.T) {
			k, err := sig.ParsePrivateKeyPEM([]byte(tc.pem))
			if !errors.Is(err, tc.want) || (tc.want == nil && (err != nil || k == nil)) {
				t.Fatalf("ParsePrivateKeyPEM = %T, %v; want %v", k, err, tc.want)
			}
		})
	}
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	// crypto/rsa no longer generates keys this small; any 512-bit odd
	// modulus serves to check that parsing refuses it.
	tinyN := new(big.Int).Lsh(big.NewInt(1), 511)
	tinyN.Add(tinyN, big.NewInt(12345))
	tiny := &rsa.PrivateKey{PublicKey: rsa.PublicKey{N: tinyN, E: 65537}}
	pub := []struct {
		name, pem string
		want      error
	}{
		{"rsa spki", pemOf("PUBLIC KEY", spki(rsaKey.Public())), nil},
		{"rsa pkcs1", pemOf("RSA PUBLIC KEY", x509.MarshalPKCS1PublicKey(&rsaKey.PublicKey)), nil},
		{"rsa 1024 verifies", pemOf("PUBLIC KEY", spki(small.Public())), nil},
		{"rsa 512 refused", pemOf("PUBLIC KEY", spki(tiny.Public())), sig.ErrWeakKey},
		{"rsa-pss spki", pemOf("PUBLIC KEY", pssSPKI(pss, x509.MarshalPKCS1PublicKey(&rsaKey.PublicKey))), nil},
		{"rsa-pss spki with a broken key", pemOf("PUBLIC KEY", pssSPKI(pss, []byte{1, 2, 3})), sig.ErrMalformed},
		{"rsa-pss spki 512 refused", pemOf("PUBLIC KEY", pssSPKI(pss, x509.MarshalPKCS1PublicKey(&tiny.PublicKey))), sig.ErrWeakKey},
		{"unknown spki algorithm", pemOf("PUBLIC KEY", pssSPKI(other, x509.MarshalPKCS1PublicKey(&rsaKey.PublicKey))), sig.ErrMalformed},
		{"ed25519 spki", pemOf("PUBLIC KEY", spki(ed.Public())), nil},
		{"p-256 spki", pemOf("PUBLIC KEY", spki(ec.Public())), nil},
		{"p-384 refused", pemOf("PUBLIC KEY", spki(ec384.Public())), sig.ErrUnsupportedKey},
		{"leading whitespace", "\n  " + pemOf("PUBLIC KEY", spki(ed.Public())), nil},
		{"certificate refused", pemOf("CERTIFICATE", []byte{0}), sig.ErrUnsupportedKey},
	}
	for _, tc := range pub {
		t.Run("public/"+tc.name, func(t *testing.T) {
			k, err := sig.ParsePublicKeyPEM([]byte(tc.pem))
			if !errors.Is(err, tc.want) || (tc.want == nil && (err != nil || k == nil)) {
				t.Fatalf("ParsePublicKeyPEM = %T, %v; want %v", k, err, tc.want)
			}
		})
	}
	// Signing refuses what verifying tolerates.
	if _, err := sig.NewSigner(small, keyID, nil); !errors.Is(err, sig.ErrWeakKey) {
		t.Fatalf("NewSigner(1024) = %v", err)
	}
	out, err := sig.MarshalPrivateKeyPEM(ed)
	if err != nil || !strings.HasPrefix(string(out), "-----BEGIN PRIVATE KEY-----") {
		t.Fatalf("MarshalPrivateKeyPEM: %v", err)
	}
}

func TestParseKeyID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		ok       bool
		doc      string
	}{
		{"actor fragment", "https://relay.example/actor#main-key", true, "https://relay.example/actor"},
		{"no fragment", "https://a.example/key", true, "https://a.example/key"},
		{"not a URL", "test-key-rsa", true, "test-key-rsa"},
		{"empty", "", false, ""},
		{"padded", " https://a.example/k ", false, ""},
		{"newline", "https://a.example/k\n#x", false, ""},
		{"control", "https://a.example/\x00", false, ""},
		{"quote", `https://a.example/"k`, false, ""},
		{"backslash", `https://a.example/\k`, false, ""},
		{"invalid utf-8", "https://a.example/\xff", false, ""},
		{"too long", "https://a.example/" + strings.Repeat("a", sig.MaxKeyIDBytes), false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, err := sig.ParseKeyID(tc.in)
			if (err == nil) != tc.ok {
				t.Fatalf("ParseKeyID(%q) = %v", tc.in, err)
			}
			if !tc.ok {
				if !errors.Is(err, sig.ErrMalformed) || !id.IsZero() {
					t.Fatalf("error %v, id %v", err, id)
				}
				return
			}
			if id.String() != tc.in || id.Document() != tc.doc || id.IsZero() {
				t.Fatalf("%v: String %q Document %q", id, id.String(), id.Document())
			}
			text, _ := id.MarshalText()
			var back sig.KeyID
			if err := back.UnmarshalText(text); err != nil || back != id {
				t.Fatalf("text round trip: %v", err)
			}
		})
	}
}
