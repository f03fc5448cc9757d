package sig_test

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/mr-tron/base58"

	"github.com/fedkit/fedkit/sig"
)

// W3C vc-di-eddsa test vector (TestVectors/keyPair.json and
// TestVectors/eddsa-jcs-2022/signedJCS.json).
const (
	w3cPublicKeyMultibase  = "z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2"
	w3cPrivateKeyMultibase = "z3u2en7t5LR2WtQH5PfFqMqwVHBeXouLzo6haApm8XHqvjxq"
	w3cSignedJCS           = `{
  "@context": ["https://www.w3.org/ns/credentials/v2", "https://www.w3.org/ns/credentials/examples/v2"],
  "id": "urn:uuid:58172aac-d8ba-11ed-83dd-0b3aef56cc33",
  "type": ["VerifiableCredential", "AlumniCredential"],
  "name": "Alumni Credential",
  "description": "A minimum viable example of an Alumni Credential.",
  "issuer": "https://vc.example/issuers/5678",
  "validFrom": "2023-01-01T00:00:00Z",
  "credentialSubject": {"id": "did:example:abcdefgh", "alumniOf": "The School of Examples"},
  "proof": {
    "type": "DataIntegrityProof",
    "cryptosuite": "eddsa-jcs-2022",
    "created": "2023-02-24T23:36:38Z",
    "verificationMethod": "https://vc.example/issuers/5678#z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2",
    "proofPurpose": "assertionMethod",
    "@context": ["https://www.w3.org/ns/credentials/v2", "https://www.w3.org/ns/credentials/examples/v2"],
    "proofValue": "z63t83Y53KfzJ5ZosfKTnqfMcKB2dmTrfjSaQjeNNjAD5srBowQfmWqeRb8rRjmeEuCBEsddF9LsVogtuTsijJKh4"
  }
}`
)

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func w3cKey(t *testing.T) (ed25519.PrivateKey, ed25519.PublicKey) {
	t.Helper()
	b, err := base58.Decode(w3cPrivateKeyMultibase[1:])
	if err != nil || len(b) != 34 || b[0] != 0x80 || b[1] != 0x26 { // ed25519-priv 0x1300
		t.Fatalf("private multikey: %x %v", b, err)
	}
	priv := ed25519.NewKeyFromSeed(b[2:])
	pub, err := sig.ParseMultikey(w3cPublicKeyMultibase)
	if err != nil {
		t.Fatal(err)
	}
	if !pub.(ed25519.PublicKey).Equal(priv.Public()) {
		t.Fatal("key pair mismatch")
	}
	return priv, pub.(ed25519.PublicKey)
}

func TestEdDSAJCS2022W3CVector(t *testing.T) {
	t.Parallel()
	priv, pub := w3cKey(t)
	signed := decodeJSON(t, w3cSignedJCS)
	t.Run("verify", func(t *testing.T) {
		p, err := sig.VerifyProof(signed, pub)
		if err != nil {
			t.Fatal(err)
		}
		if p.ProofPurpose != "assertionMethod" || !p.Created.Equal(time.Date(2023, 2, 24, 23, 36, 38, 0, time.UTC)) {
			t.Fatalf("proof %+v", p)
		}
	})
	t.Run("reproduce proofValue", func(t *testing.T) {
		unsigned := decodeJSON(t, w3cSignedJCS)
		delete(unsigned, "proof")
		got, err := sig.CreateProof(unsigned, priv, &sig.ProofOpts{
			VerificationMethod: "https://vc.example/issuers/5678#" + w3cPublicKeyMultibase,
			Created:            time.Date(2023, 2, 24, 23, 36, 38, 0, time.UTC),
		})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, signed) {
			a, _ := json.Marshal(got["proof"])
			t.Fatalf("signed document differs; proof %s", a)
		}
	})
	t.Run("tampered", func(t *testing.T) {
		for name, mutate := range map[string]func(m map[string]any){
			"document":      func(m map[string]any) { m["name"] = "Other" },
			"proof purpose": func(m map[string]any) { m["proof"].(map[string]any)["proofPurpose"] = "authentication" },
			"context":       func(m map[string]any) { m["@context"] = []any{"https://www.w3.org/ns/credentials/v2"} },
		} {
			m := decodeJSON(t, w3cSignedJCS)
			mutate(m)
			if _, err := sig.VerifyProof(m, pub); !errors.Is(err, sig.ErrBadSignature) {
				t.Errorf("%s: VerifyProof = %v", name, err)
			}
		}
	})
}

func TestProofRoundTripActivity(t *testing.T) {
	t.Parallel()
	_, priv, _ := ed25519.GenerateKey(nil)
	doc := sig.WithDataIntegrityContext(map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams",
		"type":     "Create",
		"actor":    "https://a.example/actor",
		"object":   map[string]any{"type": "Note", "content": "<p>1 < 2 & 3</p>", "n": 1.5e3},
	})
	signed, err := sig.CreateProof(doc, priv, &sig.ProofOpts{VerificationMethod: "https://a.example/actor#ed25519-key", Created: t0})
	if err != nil {
		t.Fatal(err)
	}
	// Through the wire: JSON bytes and back.
	raw, _ := json.Marshal(signed)
	back := decodeJSON(t, string(raw))
	if _, err := sig.VerifyProof(back, priv.Public().(ed25519.PublicKey)); err != nil {
		t.Fatalf("VerifyProof: %v\n%s", err, raw)
	}
	if _, err := sig.VerifyProof(doc, priv.Public().(ed25519.PublicKey)); !errors.Is(err, sig.ErrNoProof) {
		t.Fatalf("unsigned: %v", err)
	}
}

func TestWithDataIntegrityContext(t *testing.T) {
	t.Parallel()
	const as, di = "https://www.w3.org/ns/activitystreams", sig.DataIntegrityContext
	obj := map[string]any{"toot": "http://joinmastodon.org/ns#"}
	cases := []struct {
		name string
		in   any // nil: absent
		want any
	}{
		{"absent", nil, di},
		{"string", as, []any{di, as}},
		{"array", []any{as, obj}, []any{di, as, obj}},
		{"object", obj, []any{di, obj}},
		{"already there", []any{as, di}, []any{as, di}},
		{"v1 already there", []any{"https://w3id.org/security/data-integrity/v1", as}, []any{"https://w3id.org/security/data-integrity/v1", as}},
		{"string slice", []string{as}, []any{di, as}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := map[string]any{"type": "Note", "content": "x"}
			if tc.in != nil {
				doc["@context"] = tc.in
			}
			before := len(doc)
			got := sig.WithDataIntegrityContext(doc)
			if !reflect.DeepEqual(got["@context"], tc.want) {
				t.Fatalf("@context = %#v, want %#v", got["@context"], tc.want)
			}
			if got["type"] != "Note" || got["content"] != "x" || len(doc) != before {
				t.Fatalf("other members changed or input mutated: %v / %v", got, doc)
			}
		})
	}
}
