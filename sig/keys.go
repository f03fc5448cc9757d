package sig

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"strings"
)

// MinRSABits is the smallest RSA modulus we sign with; smaller keys are
// refused with ErrWeakKey.
const MinRSABits = 2048

// Verification bounds: cavage-12 Appendix C uses a 1024-bit key, and keys
// above 16384 bits only buy an attacker CPU time.
const (
	minVerifyRSABits = 1024
	maxRSABits       = 16384
)

// ParsePrivateKeyPEM parses the first PEM block of data as a private key:
// "RSA PRIVATE KEY" (PKCS#1), "PRIVATE KEY" (PKCS#8: RSA, Ed25519, ECDSA
// P-256, and RSA under the id-RSASSA-PSS OID, as RFC 9421's
// test-key-rsa-pss) or "EC PRIVATE KEY" (SEC 1, P-256). RSA keys are
// precomputed. An RSASSA-PSS key comes back as a plain *rsa.PrivateKey:
// its OID and any parameters are not kept, so sign with AlgRSAPSSSHA512
// explicitly.
func ParsePrivateKeyPEM(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%w: no PEM block", ErrMalformed)
	}
	var key any
	var err error
	switch block.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			if k, ok := parsePSSPrivateKey(block.Bytes); ok {
				key, err = k, nil
			}
		}
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("%w: PEM type %q", ErrUnsupportedKey, block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return privateSigner(key)
}

func privateSigner(key any) (crypto.Signer, error) {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		// Precompute writes to the key; a caller's key may be shared with
		// goroutines signing with it, so work on a copy. Keys from x509
		// are precomputed already and used as they are.
		if k.Precomputed.Dp == nil {
			c := *k
			c.Precompute()
			return &c, nil
		}
		return k, nil
	case ed25519.PrivateKey:
		return k, nil
	case *ed25519.PrivateKey:
		return *k, nil
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return nil, fmt.Errorf("%w: ECDSA curve %s", ErrUnsupportedKey, k.Curve.Params().Name)
		}
		return k, nil
	}
	return nil, fmt.Errorf("%w: %T", ErrUnsupportedKey, key)
}

// ParsePublicKeyPEM parses the first PEM block of data as a public key:
// "PUBLIC KEY" (SPKI: RSA, also under the id-RSASSA-PSS OID, Ed25519,
// ECDSA P-256) or "RSA PUBLIC KEY"
// (PKCS#1). Leading whitespace, as some actor documents carry, is ignored.
func ParsePublicKeyPEM(data []byte) (crypto.PublicKey, error) {
	block, _ := pem.Decode([]byte(strings.TrimSpace(string(data))))
	if block == nil {
		return nil, fmt.Errorf("%w: no PEM block", ErrMalformed)
	}
	var key any
	var err error
	switch block.Type {
	case "PUBLIC KEY":
		key, err = x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			if k, ok := parsePSSPublicKey(block.Bytes); ok {
				key, err = k, nil
			}
		}
	case "RSA PUBLIC KEY":
		key, err = x509.ParsePKCS1PublicKey(block.Bytes)
	default:
		return nil, fmt.Errorf("%w: PEM type %q", ErrUnsupportedKey, block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if err := checkPublicKey(key); err != nil {
		return nil, err
	}
	return key, nil
}

// checkPublicKey accepts the key types we verify with, within size bounds.
func checkPublicKey(key any) error {
	switch k := key.(type) {
	case *rsa.PublicKey:
		if n := k.N.BitLen(); n < minVerifyRSABits {
			return fmt.Errorf("%w: RSA %d bits", ErrWeakKey, n)
		} else if n > maxRSABits {
			return fmt.Errorf("%w: RSA %d bits", ErrUnsupportedKey, n)
		}
		return nil
	case ed25519.PublicKey:
		if len(k) != ed25519.PublicKeySize {
			return fmt.Errorf("%w: Ed25519 key of %d bytes", ErrMalformed, len(k))
		}
		return nil
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() {
			return fmt.Errorf("%w: ECDSA curve %s", ErrUnsupportedKey, k.Curve.Params().Name)
		}
		return nil
	}
	return fmt.Errorf("%w: %T", ErrUnsupportedKey, key)
}

// checkSigningKey refuses keys we will not sign with.
func checkSigningKey(key any) error {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if n := k.N.BitLen(); n < MinRSABits {
			return fmt.Errorf("%w: RSA %d bits, need %d", ErrWeakKey, n, MinRSABits)
		} else if n > maxRSABits {
			return fmt.Errorf("%w: RSA %d bits", ErrUnsupportedKey, n)
		}
		return nil
	case ed25519.PrivateKey:
		if len(k) != ed25519.PrivateKeySize {
			return fmt.Errorf("%w: Ed25519 key of %d bytes", ErrMalformed, len(k))
		}
		return nil
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return fmt.Errorf("%w: ECDSA curve %s", ErrUnsupportedKey, k.Curve.Params().Name)
		}
		return nil
	case []byte:
		if len(k) == 0 {
			return fmt.Errorf("%w: empty HMAC key", ErrWeakKey)
		}
		return nil
	}
	return fmt.Errorf("%w: %T", ErrUnsupportedKey, key)
}

// MarshalPublicKeyPEM encodes an RSA, Ed25519 or ECDSA P-256 public key as
// an SPKI "PUBLIC KEY" PEM block, the form actor documents publish.
func MarshalPublicKeyPEM(pub crypto.PublicKey) ([]byte, error) {
	if err := checkPublicKey(pub); err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupportedKey, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// MarshalPrivateKeyPEM encodes a private key as a PKCS#8 "PRIVATE KEY" PEM
// block.
func MarshalPrivateKeyPEM(key crypto.Signer) ([]byte, error) {
	if _, err := privateSigner(key); err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupportedKey, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// oidRSASSAPSS is id-RSASSA-PSS (RFC 8017 A.2.3), which crypto/x509
// parses in certificates but not as a PKCS#8 or SPKI key algorithm.
var oidRSASSAPSS = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 10}

// pkcs8Info is PKCS#8 PrivateKeyInfo (RFC 5208); attributes are not read.
type pkcs8Info struct {
	Version    int
	Algo       pkix.AlgorithmIdentifier
	PrivateKey []byte
}

// spkiInfo is SubjectPublicKeyInfo (RFC 5280).
type spkiInfo struct {
	Algo      pkix.AlgorithmIdentifier
	PublicKey asn1.BitString
}

// parsePSSPrivateKey reads a PKCS#8 RSASSA-PSS key: the algorithm is
// id-RSASSA-PSS and the key an RSAPrivateKey (PKCS#1), as for plain RSA.
// The PSS parameters, when present, are not enforced.
func parsePSSPrivateKey(der []byte) (*rsa.PrivateKey, bool) {
	var info pkcs8Info
	rest, err := asn1.Unmarshal(der, &info)
	if err != nil || len(rest) != 0 || (info.Version != 0 && info.Version != 1) || !info.Algo.Algorithm.Equal(oidRSASSAPSS) {
		return nil, false
	}
	k, err := x509.ParsePKCS1PrivateKey(info.PrivateKey)
	if err != nil {
		return nil, false
	}
	return k, true
}

// parsePSSPublicKey reads an SPKI RSASSA-PSS key: the algorithm is
// id-RSASSA-PSS and the key an RSAPublicKey (PKCS#1).
func parsePSSPublicKey(der []byte) (*rsa.PublicKey, bool) {
	var info spkiInfo
	rest, err := asn1.Unmarshal(der, &info)
	if err != nil || len(rest) != 0 || !info.Algo.Algorithm.Equal(oidRSASSAPSS) || info.PublicKey.BitLength%8 != 0 {
		return nil, false
	}
	k, err := x509.ParsePKCS1PublicKey(info.PublicKey.Bytes)
	if err != nil {
		return nil, false
	}
	return k, true
}
