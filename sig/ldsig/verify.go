package ldsig

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/fedkit/fedkit/sig"
)

// TypeRsaSignature2017 is the only signature type Mastodon and Fedify
// make and check.
const TypeRsaSignature2017 = "RsaSignature2017"

// Verifier checks the RsaSignature2017 signature of an activity, as
// Mastodon and Fedify do, to trust an activity that reached the inbox
// from someone other than its actor (a forwarded reply, a relayed post).
// Only Keys is required; the zero value of every other field means its
// default. It is safe for concurrent use.
type Verifier struct {
	// Keys resolves the signature's creator (a key ID) to its key and
	// owner. Required.
	Keys sig.KeyResolver
	// Contexts adds JSON-LD context documents, by the URL documents name
	// them with, to those the package ships (ShippedContexts). Nothing is
	// ever fetched. Defaults to none.
	Contexts map[string][]byte
	// MaxBodyBytes bounds the body. Defaults to MaxBodyBytesDefault.
	MaxBodyBytes int64
	// DisableActorCheck accepts a signature by a key whose owner is not
	// the activity's actor; VerifyActivity then only reports the owner.
	// Defaults to false: the owner must be the actor, as Mastodon
	// requires before it trusts a forwarded activity.
	DisableActorCheck bool
}

// Signature is a parsed RsaSignature2017 signature, not yet verified.
type Signature struct {
	Type    string
	Creator sig.KeyID
	// Created is zero when absent or unparsable: neither Mastodon nor
	// Fedify checks it, and a forwarded activity may be old.
	Created time.Time
	Value   []byte
}

// ParseSignature returns the signature member of doc without verifying
// it, so a caller can see who claims to have signed. It returns
// ErrNoSignature, ErrUnsupportedType or ErrMalformed.
func ParseSignature(doc map[string]any) (*Signature, error) {
	raw, ok := doc["signature"]
	if !ok {
		return nil, ErrNoSignature
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: signature is not an object", ErrMalformed)
	}
	s := &Signature{}
	s.Type, _ = m["type"].(string)
	if s.Type != TypeRsaSignature2017 {
		return nil, fmt.Errorf("%w: %.64q", ErrUnsupportedType, s.Type)
	}
	creator, _ := m["creator"].(string)
	id, err := sig.ParseKeyID(creator)
	if err != nil {
		return nil, fmt.Errorf("%w: creator: %v", ErrMalformed, err)
	}
	s.Creator = id
	if c, ok := m["created"].(string); ok {
		s.Created, _ = time.Parse(time.RFC3339Nano, c)
	}
	v, _ := m["signatureValue"].(string)
	if s.Value, err = base64.StdEncoding.DecodeString(v); err != nil || len(s.Value) == 0 || len(s.Value) > 2048 {
		return nil, fmt.Errorf("%w: signatureValue is not base64", ErrMalformed)
	}
	return s, nil
}

// Detach returns a shallow copy of doc without its signature member:
// the document a Data Integrity proof in it was made over. Fedify makes
// the eddsa-jcs-2022 proof first and the RsaSignature2017 signature last
// (over the proof too), so the proof verifies only with the signature
// detached: sig.VerifyProof(ldsig.Detach(doc), key).
func Detach(doc map[string]any) map[string]any {
	out := maps.Clone(doc)
	delete(out, "signature")
	return out
}

// VerifyActivity verifies the RsaSignature2017 signature of the JSON-LD
// document body and returns its creator and the creator key's owner.
//
// The signed data are, as LD Signatures 2017 define them and Mastodon
// and Fedify compute them, the hex SHA-256 of the URDNA2015 canonical
// N-Quads of the signature options (the signature without type, id and
// signatureValue, under the identity v1 context) followed by that of the
// document without its signature; signatureValue is their RSA PKCS#1
// v1.5 SHA-256 signature. Contexts come only from those shipped (and
// v.Contexts); the creator's key from v.Keys.
//
// Before canonicalising it refuses what could mislead a reader or stall
// the canonicaliser: duplicate member names, inline contexts that change
// a shipped term's meaning (ErrContextOverride), and documents over the
// size, nesting and blank-node bounds (ErrTooComplex). Unless
// DisableActorCheck, the key's owner must be the activity's actor
// (ErrNotOwned).
//
// On failure keyID is the claimed creator once the signature parsed.
// Errors: ErrNoSignature, ErrUnsupportedType, ErrMalformed,
// ErrTooComplex, ErrContextOverride, *UnknownContextError, the resolver's
// error wrapped with sig.ErrUnknownKey, ErrBadSignature, ErrNotOwned.
func (v *Verifier) VerifyActivity(ctx context.Context, body []byte) (keyID sig.KeyID, owner string, err error) {
	if v.Keys == nil {
		return sig.KeyID{}, "", errors.New("ldsig: Verifier without Keys")
	}
	limit := v.MaxBodyBytes
	if limit <= 0 {
		limit = MaxBodyBytesDefault
	}
	if int64(len(body)) > limit {
		return sig.KeyID{}, "", fmt.Errorf("%w: body of %d bytes, limit %d", ErrTooComplex, len(body), limit)
	}
	doc, err := decodeObject(body)
	if err != nil {
		return sig.KeyID{}, "", err
	}
	s, err := ParseSignature(doc)
	if err != nil {
		return sig.KeyID{}, "", err
	}
	l, err := newLoader(v.Contexts)
	if err != nil {
		return s.Creator, "", err
	}
	if err := checkContexts(doc, l); err != nil {
		return s.Creator, "", err
	}
	key, err := v.Keys.ResolveKey(ctx, s.Creator)
	if err != nil {
		if errors.Is(err, sig.ErrUnknownKey) {
			return s.Creator, "", err
		}
		return s.Creator, "", fmt.Errorf("%w: %w", sig.ErrUnknownKey, err)
	}
	if key == nil {
		return s.Creator, "", fmt.Errorf("%w: resolver returned no key", sig.ErrUnknownKey)
	}
	pub, ok := key.Public.(*rsa.PublicKey)
	if !ok {
		return s.Creator, "", fmt.Errorf("%w: RsaSignature2017 with a %T key", ErrUnsupportedType, key.Public)
	}
	if n := pub.N.BitLen(); n < 1024 || n > 16384 {
		return s.Creator, "", fmt.Errorf("%w: RSA key of %d bits", ErrUnsupportedType, n)
	}
	msg, err := signedData(doc, doc["signature"].(map[string]any), l)
	if err != nil {
		return s.Creator, "", err
	}
	h := sha256.Sum256(msg)
	if rsa.VerifyPKCS1v15(pub, crypto.SHA256, h[:], s.Value) != nil {
		return s.Creator, "", ErrBadSignature
	}
	if key.Owner == "" {
		return s.Creator, "", fmt.Errorf("%w: key has no owner", ErrNotOwned)
	}
	if !v.DisableActorCheck {
		if a := actorOf(doc); a != key.Owner {
			return s.Creator, key.Owner, fmt.Errorf("%w: actor %.128q, key owner %.128q", ErrNotOwned, a, key.Owner)
		}
	}
	return s.Creator, key.Owner, nil
}

// signedData is hash(options) || hash(document), both hex.
func signedData(doc, signature map[string]any, l *loader) ([]byte, error) {
	opts := maps.Clone(signature)
	delete(opts, "type")
	delete(opts, "id")
	delete(opts, "signatureValue")
	opts["@context"] = ctxIdentityV1
	oh, err := hash(opts, l)
	if err != nil {
		return nil, err
	}
	dh, err := hash(Detach(doc), l)
	if err != nil {
		return nil, err
	}
	return []byte(oh + dh), nil
}

// actorOf returns the activity's actor: a string, or an object's id.
func actorOf(doc map[string]any) string {
	switch a := doc["actor"].(type) {
	case string:
		return a
	case map[string]any:
		id, _ := a["id"].(string)
		return id
	}
	return ""
}
