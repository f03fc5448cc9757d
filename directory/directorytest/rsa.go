package directorytest

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
)

func verifyRSA(pub crypto.PublicKey, msg, sigBytes []byte) error {
	k, ok := pub.(*rsa.PublicKey)
	if !ok {
		return errors.New("directorytest: not an RSA public key")
	}
	sum := sha256.Sum256(msg)
	return rsa.VerifyPKCS1v15(k, crypto.SHA256, sum[:], sigBytes)
}
