package sig

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"time"

	"github.com/gowebpki/jcs"
	"github.com/mr-tron/base58"
)

// Data Integrity names (W3C vc-data-integrity, vc-di-eddsa; FEP-8b32).
const (
	// DataIntegrityContext defines proof, DataIntegrityProof and its terms.
	DataIntegrityContext    = "https://w3id.org/security/data-integrity/v2"
	ProofTypeDataIntegrity  = "DataIntegrityProof"
	CryptosuiteEdDSAJCS2022 = "eddsa-jcs-2022"
	// ProofPurposeDefault is the purpose of a proof on an activity.
	ProofPurposeDefault = "assertionMethod"
)

// contexts that already define the Data Integrity terms.
var diContexts = map[string]bool{
	DataIntegrityContext:                          true,
	"https://w3id.org/security/data-integrity/v1": true,
	"https://www.w3.org/ns/credentials/v2":        true,
}

// ErrNoProof is returned when a document has no proof to verify.
var ErrNoProof = errors.New("sig: no proof")

// WithDataIntegrityContext returns a shallow copy of doc whose @context
// has DataIntegrityContext first, whatever its shape: absent (it becomes
// the string), a string or an object (they become [DI, old]), or an array
// (DI is prepended). A context that already includes a Data Integrity
// context is left as it is. Other members are untouched.
func WithDataIntegrityContext(doc map[string]any) map[string]any {
	out := maps.Clone(doc)
	if out == nil {
		out = map[string]any{}
	}
	ctx, ok := out["@context"]
	switch c := ctx.(type) {
	case nil:
		if !ok {
			out["@context"] = DataIntegrityContext
			return out
		}
		out["@context"] = []any{DataIntegrityContext}
	case string:
		if !diContexts[c] {
			out["@context"] = []any{DataIntegrityContext, c}
		}
	case []any:
		for _, e := range c {
			if s, isStr := e.(string); isStr && diContexts[s] {
				return out
			}
		}
		out["@context"] = append([]any{DataIntegrityContext}, c...)
	case []string:
		for _, s := range c {
			if diContexts[s] {
				return out
			}
		}
		l := []any{DataIntegrityContext}
		for _, s := range c {
			l = append(l, s)
		}
		out["@context"] = l
	default:
		out["@context"] = []any{DataIntegrityContext, c}
	}
	return out
}

// Proof is a Data Integrity proof (eddsa-jcs-2022).
type Proof struct {
	VerificationMethod string
	ProofPurpose       string
	Created            time.Time // zero when absent
}

// ProofOpts configures CreateProof.
type ProofOpts struct {
	// VerificationMethod is the key's ID, e.g. the actor's
	// "https://example.com/actor#ed25519-key". Required.
	VerificationMethod string
	// ProofPurpose. Defaults to ProofPurposeDefault.
	ProofPurpose string
	// Created is written as created, in whole seconds (UTC). Defaults to
	// no created member.
	Created time.Time
}

// CreateProof returns a copy of doc with an eddsa-jcs-2022
// DataIntegrityProof signed by key (W3C vc-di-eddsa 3.3). The proof
// carries doc's @context, as the W3C test vector does. Call
// WithDataIntegrityContext first so JSON-LD readers can find proof.
// An existing proof is refused: proof sets and chains are not supported.
func CreateProof(doc map[string]any, key ed25519.PrivateKey, opts *ProofOpts) (map[string]any, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: Ed25519 key of %d bytes", ErrUnsupportedKey, len(key))
	}
	if opts == nil || opts.VerificationMethod == "" {
		return nil, errors.New("sig: CreateProof needs a VerificationMethod")
	}
	if _, has := doc["proof"]; has {
		return nil, errors.New("sig: document already has a proof")
	}
	proof := map[string]any{
		"type":               ProofTypeDataIntegrity,
		"cryptosuite":        CryptosuiteEdDSAJCS2022,
		"verificationMethod": opts.VerificationMethod,
		"proofPurpose":       opts.ProofPurpose,
	}
	if opts.ProofPurpose == "" {
		proof["proofPurpose"] = ProofPurposeDefault
	}
	if !opts.Created.IsZero() {
		proof["created"] = opts.Created.UTC().Truncate(time.Second).Format(time.RFC3339)
	}
	if c, ok := doc["@context"]; ok {
		proof["@context"] = c
	}
	hash, err := proofHash(doc, proof)
	if err != nil {
		return nil, err
	}
	proof["proofValue"] = "z" + base58.Encode(ed25519.Sign(key, hash))
	out := maps.Clone(doc)
	out["proof"] = proof
	return out, nil
}

// ParseProof returns the proof of doc without verifying it, so a caller
// can find the verification method's key.
func ParseProof(doc map[string]any) (*Proof, error) {
	p, err := proofOf(doc)
	if err != nil {
		return nil, err
	}
	out := &Proof{}
	out.VerificationMethod, _ = p["verificationMethod"].(string)
	out.ProofPurpose, _ = p["proofPurpose"].(string)
	if c, ok := p["created"].(string); ok {
		t, err := time.Parse(time.RFC3339, c)
		if err != nil {
			return nil, fmt.Errorf("%w: proof created: %v", ErrMalformed, err)
		}
		out.Created = t
	}
	if out.VerificationMethod == "" {
		return nil, fmt.Errorf("%w: proof without verificationMethod", ErrMalformed)
	}
	return out, nil
}

func proofOf(doc map[string]any) (map[string]any, error) {
	raw, ok := doc["proof"]
	if !ok {
		return nil, ErrNoProof
	}
	p, ok := raw.(map[string]any)
	if !ok {
		// A proof set (array) is not supported.
		return nil, fmt.Errorf("%w: proof is not a single object", ErrMalformed)
	}
	if p["type"] != ProofTypeDataIntegrity || p["cryptosuite"] != CryptosuiteEdDSAJCS2022 {
		return nil, fmt.Errorf("%w: proof %v/%v", ErrUnsupportedAlgorithm, p["type"], p["cryptosuite"])
	}
	return p, nil
}

// VerifyProof verifies doc's eddsa-jcs-2022 proof with pub (W3C
// vc-di-eddsa 3.3.2) and returns it. It returns ErrNoProof,
// ErrUnsupportedAlgorithm, ErrMalformed or ErrBadSignature.
func VerifyProof(doc map[string]any, pub ed25519.PublicKey) (*Proof, error) {
	if len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%w: Ed25519 key of %d bytes", ErrUnsupportedKey, len(pub))
	}
	p, err := proofOf(doc)
	if err != nil {
		return nil, err
	}
	parsed, err := ParseProof(doc)
	if err != nil {
		return nil, err
	}
	pv, _ := p["proofValue"].(string)
	if len(pv) < 2 || pv[0] != 'z' || len(pv) > 256 {
		return nil, fmt.Errorf("%w: proofValue", ErrMalformed)
	}
	sigBytes, err := base58.Decode(pv[1:])
	if err != nil || len(sigBytes) != ed25519.SignatureSize {
		return nil, fmt.Errorf("%w: proofValue", ErrMalformed)
	}
	unsecured := maps.Clone(doc)
	delete(unsecured, "proof")
	opts := maps.Clone(p)
	delete(opts, "proofValue")
	if pc, ok := opts["@context"]; ok {
		// The document's context must start with the proof's.
		if !contextPrefix(pc, doc["@context"]) {
			return nil, fmt.Errorf("%w: proof @context is not a prefix of the document's", ErrBadSignature)
		}
		unsecured["@context"] = pc
	}
	if c, ok := unsecured["@context"]; ok {
		opts["@context"] = c
	}
	hash, err := proofHash(unsecured, opts)
	if err != nil {
		return nil, err
	}
	if !ed25519.Verify(pub, hash, sigBytes) {
		return nil, ErrBadSignature
	}
	return parsed, nil
}

func contextPrefix(prefix, full any) bool {
	as := func(v any) []any {
		if l, ok := v.([]any); ok {
			return l
		}
		return []any{v}
	}
	p, f := as(prefix), as(full)
	if len(p) > len(f) {
		return false
	}
	for i := range p {
		if !reflect.DeepEqual(p[i], f[i]) {
			return false
		}
	}
	return true
}

// proofHash is SHA-256(JCS(proof config)) || SHA-256(JCS(document)).
func proofHash(doc, proofConfig map[string]any) ([]byte, error) {
	canonProof, err := canonical(proofConfig)
	if err != nil {
		return nil, err
	}
	canonDoc, err := canonical(doc)
	if err != nil {
		return nil, err
	}
	a, b := sha256.Sum256(canonProof), sha256.Sum256(canonDoc)
	return append(a[:], b[:]...), nil
}

func canonical(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: JCS: %v", ErrMalformed, err)
	}
	return out, nil
}
