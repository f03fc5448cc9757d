package ldsig

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fedkit/fedkit/sig"
)

// SignOpts configures Sign.
type SignOpts struct {
	// Creator is the signing key's ID, e.g.
	// "https://example.com/users/alice#main-key". Required.
	Creator string
	// Created is written as created, in whole seconds (UTC), as Mastodon
	// writes it. Defaults to the current time.
	Created time.Time
	// Contexts adds context documents by URL, as Verifier.Contexts.
	// Defaults to none.
	Contexts map[string][]byte
}

// Sign returns body with an RsaSignature2017 signature member made with
// key (RSA, at least sig.MinRSABits), as Mastodon signs the activities it
// sends so that others can forward them. The rest of body is kept byte for
// byte: the signature is appended as the last member. To carry a Data
// Integrity proof as well, make the proof first (sig.CreateProof) and sign
// last, as Fedify does, so the proof verifies with the signature detached.
// A body that already has a signature is refused.
func Sign(body []byte, key crypto.Signer, opts *SignOpts) ([]byte, error) {
	k, ok := key.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%w: RsaSignature2017 needs an RSA key, not %T", ErrUnsupportedType, key)
	}
	if n := k.N.BitLen(); n < sig.MinRSABits {
		return nil, fmt.Errorf("%w: RSA %d bits, need %d", sig.ErrWeakKey, n, sig.MinRSABits)
	}
	if opts == nil || opts.Creator == "" {
		return nil, errors.New("ldsig: Sign needs a Creator")
	}
	if _, err := sig.ParseKeyID(opts.Creator); err != nil {
		return nil, err
	}
	doc, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	if _, has := doc["signature"]; has {
		return nil, errors.New("ldsig: document already has a signature")
	}
	l, err := newLoader(opts.Contexts)
	if err != nil {
		return nil, err
	}
	created := opts.Created
	if created.IsZero() {
		created = time.Now()
	}
	s := map[string]any{
		"type":    TypeRsaSignature2017,
		"creator": opts.Creator,
		"created": created.UTC().Truncate(time.Second).Format(time.RFC3339),
	}
	msg, err := signedData(doc, s, l)
	if err != nil {
		return nil, err
	}
	h := sha256.Sum256(msg)
	raw, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, h[:])
	if err != nil {
		return nil, err
	}
	// In the order Mastodon writes the members.
	out := struct {
		Type           string `json:"type"`
		Creator        string `json:"creator"`
		Created        string `json:"created"`
		SignatureValue string `json:"signatureValue"`
	}{TypeRsaSignature2017, opts.Creator, s["created"].(string), base64.StdEncoding.EncodeToString(raw)}
	return appendMember(body, "signature", out, len(doc) > 0)
}

// appendMember adds "name": v as the last member of the JSON object
// body, leaving the rest of it as it was.
func appendMember(body []byte, name string, v any, hasMembers bool) ([]byte, error) {
	end := bytes.LastIndexByte(body, '}')
	if end < 0 {
		return nil, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	val := bytes.TrimSpace(b.Bytes())
	out := make([]byte, 0, len(body)+len(val)+len(name)+8)
	out = append(out, bytes.TrimRight(body[:end], " \t\r\n")...)
	if hasMembers {
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, name...)
	out = append(out, `":`...)
	out = append(out, val...)
	out = append(out, '}')
	out = append(out, body[end+1:]...)
	return out, nil
}
