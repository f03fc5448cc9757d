package sig

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"fmt"
	"math/big"
)

// RFC 9421 algorithm names (HTTP Signature Algorithms registry).
const (
	AlgRSAv15SHA256    = "rsa-v1_5-sha256"
	AlgRSAPSSSHA512    = "rsa-pss-sha512"
	AlgECDSAP256SHA256 = "ecdsa-p256-sha256"
	AlgEd25519         = "ed25519"
	AlgHMACSHA256      = "hmac-sha256"
)

// algForKey picks the RFC 9421 algorithm a key signs with by default.
func algForKey(key any) (string, error) {
	switch key.(type) {
	case *rsa.PrivateKey, *rsa.PublicKey:
		return AlgRSAv15SHA256, nil
	case ed25519.PrivateKey, ed25519.PublicKey:
		return AlgEd25519, nil
	case *ecdsa.PrivateKey, *ecdsa.PublicKey:
		return AlgECDSAP256SHA256, nil
	case []byte:
		return AlgHMACSHA256, nil
	}
	return "", fmt.Errorf("%w: %T", ErrUnsupportedKey, key)
}

// signRaw signs msg with key under an RFC 9421 algorithm name. It holds no
// lock: keys are read-only and crypto/rand is safe for concurrent use.
func signRaw(alg string, key any, msg []byte) ([]byte, error) {
	switch alg {
	case AlgRSAv15SHA256:
		k, ok := key.(*rsa.PrivateKey)
		if !ok {
			break
		}
		h := sha256.Sum256(msg)
		return rsa.SignPKCS1v15(nil, k, crypto.SHA256, h[:])
	case AlgRSAPSSSHA512:
		k, ok := key.(*rsa.PrivateKey)
		if !ok {
			break
		}
		h := sha512.Sum512(msg)
		return rsa.SignPSS(rand.Reader, k, crypto.SHA512, h[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	case AlgECDSAP256SHA256:
		k, ok := key.(*ecdsa.PrivateKey)
		if !ok {
			break
		}
		h := sha256.Sum256(msg)
		r, s, err := ecdsa.Sign(rand.Reader, k, h[:])
		if err != nil {
			return nil, err
		}
		// RFC 9421 3.3.4: r and s as 32-byte big-endian integers, not DER.
		out := make([]byte, 64)
		r.FillBytes(out[:32])
		s.FillBytes(out[32:])
		return out, nil
	case AlgEd25519:
		k, ok := key.(ed25519.PrivateKey)
		if !ok {
			break
		}
		return ed25519.Sign(k, msg), nil
	case AlgHMACSHA256:
		k, ok := key.([]byte)
		if !ok {
			break
		}
		m := hmac.New(sha256.New, k)
		m.Write(msg)
		return m.Sum(nil), nil
	default:
		return nil, fmt.Errorf("%w: %q", ErrUnsupportedAlgorithm, alg)
	}
	return nil, fmt.Errorf("%w: %q with a %T key", ErrUnsupportedAlgorithm, alg, key)
}

// verifyRaw checks sig over msg; it returns ErrBadSignature or
// ErrUnsupportedAlgorithm.
func verifyRaw(alg string, key any, msg, sig []byte) error {
	ok := false
	switch alg {
	case AlgRSAv15SHA256:
		k, isRSA := key.(*rsa.PublicKey)
		if !isRSA {
			return mismatch(alg, key)
		}
		h := sha256.Sum256(msg)
		ok = rsa.VerifyPKCS1v15(k, crypto.SHA256, h[:], sig) == nil
	case AlgRSAPSSSHA512:
		k, isRSA := key.(*rsa.PublicKey)
		if !isRSA {
			return mismatch(alg, key)
		}
		h := sha512.Sum512(msg)
		ok = rsa.VerifyPSS(k, crypto.SHA512, h[:], sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto}) == nil
	case AlgECDSAP256SHA256:
		k, isEC := key.(*ecdsa.PublicKey)
		if !isEC {
			return mismatch(alg, key)
		}
		if len(sig) != 64 {
			break
		}
		h := sha256.Sum256(msg)
		r := new(big.Int).SetBytes(sig[:32])
		s := new(big.Int).SetBytes(sig[32:])
		ok = ecdsa.Verify(k, h[:], r, s)
	case AlgEd25519:
		k, isEd := key.(ed25519.PublicKey)
		if !isEd {
			return mismatch(alg, key)
		}
		ok = ed25519.Verify(k, msg, sig)
	case AlgHMACSHA256:
		k, isHMAC := key.([]byte)
		if !isHMAC {
			return mismatch(alg, key)
		}
		m := hmac.New(sha256.New, k)
		m.Write(msg)
		ok = subtle.ConstantTimeCompare(m.Sum(nil), sig) == 1
	default:
		return fmt.Errorf("%w: %q", ErrUnsupportedAlgorithm, alg)
	}
	if !ok {
		return ErrBadSignature
	}
	return nil
}

func mismatch(alg string, key any) error {
	return fmt.Errorf("%w: %q with a %T key", ErrUnsupportedAlgorithm, alg, key)
}
