package sig

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"fmt"

	"github.com/mr-tron/base58"
)

// Multicodec prefixes (unsigned varints) of the public key types Multikey
// carries.
var (
	mcEd25519 = []byte{0xed, 0x01} // ed25519-pub 0xed
	mcRSA     = []byte{0x85, 0x24} // rsa-pub 0x1205, PKCS#1 DER
	mcP256    = []byte{0x80, 0x24} // p256-pub 0x1200, compressed point
)

// maxMultikeyLen bounds a publicKeyMultibase value; base58 decoding is
// quadratic, and an 8192-bit RSA key needs about 1,500 characters.
const maxMultikeyLen = 2048

// ParseMultikey decodes a Multikey publicKeyMultibase value: "z" and
// base58btc of a multicodec-prefixed key. It accepts Ed25519 (0xed), RSA
// (0x1205, PKCS#1 DER) and P-256 (0x1200, compressed) public keys.
func ParseMultikey(s string) (crypto.PublicKey, error) {
	if len(s) < 2 || s[0] != 'z' {
		return nil, fmt.Errorf("%w: Multikey is not base58btc ('z')", ErrMalformed)
	}
	if len(s) > maxMultikeyLen {
		return nil, fmt.Errorf("%w: Multikey of %d characters", ErrMalformed, len(s))
	}
	b, err := base58.Decode(s[1:])
	if err != nil || len(b) < 2 {
		return nil, fmt.Errorf("%w: Multikey is not base58btc", ErrMalformed)
	}
	prefix, key := b[:2], b[2:]
	var pub crypto.PublicKey
	switch string(prefix) {
	case string(mcEd25519):
		if len(key) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("%w: Ed25519 Multikey of %d bytes", ErrMalformed, len(key))
		}
		pub = ed25519.PublicKey(key)
	case string(mcRSA):
		k, err := x509.ParsePKCS1PublicKey(key)
		if err != nil {
			return nil, fmt.Errorf("%w: RSA Multikey: %v", ErrMalformed, err)
		}
		pub = k
	case string(mcP256):
		x, y := elliptic.UnmarshalCompressed(elliptic.P256(), key)
		if x == nil {
			return nil, fmt.Errorf("%w: P-256 Multikey", ErrMalformed)
		}
		raw := make([]byte, 65)
		raw[0] = 4
		x.FillBytes(raw[1:33])
		y.FillBytes(raw[33:])
		k, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
		if err != nil {
			return nil, fmt.Errorf("%w: P-256 Multikey: %v", ErrMalformed, err)
		}
		pub = k
	default:
		return nil, fmt.Errorf("%w: Multikey codec %x", ErrUnsupportedKey, prefix)
	}
	if err := checkPublicKey(pub); err != nil {
		return nil, err
	}
	return pub, nil
}

// FormatMultikey encodes an Ed25519, RSA or P-256 public key as a Multikey
// publicKeyMultibase value.
func FormatMultikey(pub crypto.PublicKey) (string, error) {
	if err := checkPublicKey(pub); err != nil {
		return "", err
	}
	var b []byte
	switch k := pub.(type) {
	case ed25519.PublicKey:
		b = append(append(b, mcEd25519...), k...)
	case *rsa.PublicKey:
		b = append(append(b, mcRSA...), x509.MarshalPKCS1PublicKey(k)...)
	case *ecdsa.PublicKey:
		raw, err := k.Bytes() // 0x04 || X || Y
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrUnsupportedKey, err)
		}
		b = append(append(b, mcP256...), 2|raw[64]&1)
		b = append(b, raw[1:33]...)
	}
	return "z" + base58.Encode(b), nil
}
