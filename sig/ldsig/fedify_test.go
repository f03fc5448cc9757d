package ldsig_test

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fedkit/fedkit/internal/fixture"

	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/ldsig"
)

func decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func encode(t testing.TB, m map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func appendContext(m map[string]any, c any) {
	m["@context"] = append(m["@context"].([]any), c)
}

// TestVerifyFedify checks the real Fedify delivery body as it is, then
// the same body changed in each way that must (or, for formatting, must
// not) break it.
func TestVerifyFedify(t *testing.T) {
	t.Parallel()
	f := loadFedify(t)
	cases := []struct {
		name string
		edit func(m map[string]any) // on the decoded body; nil: as is
		raw  func(b []byte) []byte  // on the bytes, after edit
		keys sig.KeyResolver        // defaults to the actor's RSA key
		v    ldsig.Verifier         // Keys filled in
		want error
	}{
		{name: "as-posted"},
		{name: "re-encoded-other-member-order", edit: func(map[string]any) {}},
		{name: "indented", raw: func(b []byte) []byte {
			var out bytes.Buffer
			_ = json.Indent(&out, b, "", "    ")
			return out.Bytes()
		}},
		{name: "content-changed", edit: func(m map[string]any) {
			m["object"].(map[string]any)["content"] = "<p>Hello from someone else</p>"
		}, want: ldsig.ErrBadSignature},
		{name: "actor-changed", edit: func(m map[string]any) { m["actor"] = "https://actor.example/users/bob" }, want: ldsig.ErrBadSignature},
		{name: "to-changed", edit: func(m map[string]any) { m["to"] = "https://actor.example/users/alice/followers" }, want: ldsig.ErrBadSignature},
		{name: "object-id-changed", edit: func(m map[string]any) {
			m["object"].(map[string]any)["id"] = "https://actor.example/users/alice/notes/2"
		}, want: ldsig.ErrBadSignature},
		{name: "published-changed", edit: func(m map[string]any) { m["published"] = "2026-12-01T19:29:47Z" }, want: ldsig.ErrBadSignature},
		{name: "proof-changed", edit: func(m map[string]any) {
			m["proof"].(map[string]any)["created"] = "2026-12-01T19:29:47Z"
		}, want: ldsig.ErrBadSignature},
		{name: "proof-removed", edit: func(m map[string]any) { delete(m, "proof") }, want: ldsig.ErrBadSignature},
		{name: "signature-created-changed", edit: func(m map[string]any) {
			m["signature"].(map[string]any)["created"] = "2026-12-01T19:29:46.810Z"
		}, want: ldsig.ErrBadSignature},
		{name: "signature-value-flipped", edit: func(m map[string]any) {
			s := m["signature"].(map[string]any)
			v := []byte(s["signatureValue"].(string))
			v[10] ^= 'A' ^ 'B'
			s["signatureValue"] = string(v)
		}, want: ldsig.ErrBadSignature},
		{name: "creator-changed", edit: func(m map[string]any) {
			m["signature"].(map[string]any)["creator"] = "https://actor.example/users/alice#other-key"
		}, keys: anyKey(f.actor, f.rsaPub), want: ldsig.ErrBadSignature},
		// Undefined members are dropped before hashing, so they are not
		// signed: Mastodon and Fedify behave the same. Documented in doc.go.
		{name: "undefined-member-is-not-signed", edit: func(m map[string]any) { m["madeUp"] = "anything" }},
		{name: "context-swaps-to-and-cc", edit: func(m map[string]any) {
			appendContext(m, map[string]any{
				"to": map[string]any{"@id": "as:cc", "@type": "@id"},
				"cc": map[string]any{"@id": "as:to", "@type": "@id"},
			})
			o := m["object"].(map[string]any)
			m["to"], m["cc"] = m["cc"], m["to"]
			o["to"], o["cc"] = o["cc"], o["to"]
		}, want: ldsig.ErrContextOverride},
		{name: "context-relabels-type", edit: func(m map[string]any) {
			appendContext(m, map[string]any{"Announce": "as:Create"})
			m["type"] = "Announce"
		}, want: ldsig.ErrContextOverride},
		{name: "context-hides-content", edit: func(m map[string]any) {
			o := m["object"].(map[string]any)
			o["@context"] = map[string]any{"content": nil, "shown": "as:content"}
			o["shown"], o["content"] = o["content"], "<p>forged</p>"
		}, want: ldsig.ErrContextOverride},
		// Terms are resolved when their context is processed, so a later
		// prefix changes nothing the document already says...
		{name: "context-prefix-redefined-unused", edit: func(m map[string]any) {
			appendContext(m, map[string]any{"as": "https://evil.example/ns#"})
		}},
		// ...but it does change a compact IRI written with it.
		{name: "context-prefix-redefined-used", edit: func(m map[string]any) {
			appendContext(m, map[string]any{"as": "https://evil.example/ns#"})
			m["as:sensitive"] = true
		}, want: ldsig.ErrContextOverride},
		// Data Integrity v1 protects its terms, so JSON-LD itself refuses
		// a null that would reset them (see TestVerifyMastodon for a
		// reset the processor allows).
		{name: "context-null-reset-protected", edit: func(m map[string]any) {
			m["@context"] = append(m["@context"].([]any), nil, map[string]any{"to": "https://www.w3.org/ns/activitystreams#cc"})
		}, want: ldsig.ErrMalformed},
		{name: "unknown-context", edit: func(m map[string]any) { appendContext(m, "https://contexts.example/never-fetched") }, want: ldsig.ErrUnknownContext},
		{name: "duplicate-member", raw: func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"actor":`), []byte(`"actor":"https://actor.example/users/mallory","actor":`), 1)
		}, want: ldsig.ErrMalformed},
		{name: "no-signature", edit: func(m map[string]any) { delete(m, "signature") }, want: ldsig.ErrNoSignature},
		{name: "other-signature-type", edit: func(m map[string]any) {
			m["signature"].(map[string]any)["type"] = "RsaSignature2018"
		}, want: ldsig.ErrUnsupportedType},
		{name: "signature-value-not-base64", edit: func(m map[string]any) {
			m["signature"].(map[string]any)["signatureValue"] = "not base64!"
		}, want: ldsig.ErrMalformed},
		{name: "creator-has-ed25519-key", keys: keys(f.keyID, f.actor, f.edPub), want: ldsig.ErrUnsupportedType},
		{name: "creator-unknown", keys: keys("https://actor.example/users/alice#other", f.actor, f.rsaPub), want: sig.ErrUnknownKey},
		{name: "key-owned-by-another-actor", keys: keys(f.keyID, "https://actor.example/users/bob", f.rsaPub), want: ldsig.ErrNotOwned},
		{name: "key-without-owner", keys: keys(f.keyID, "", f.rsaPub), want: ldsig.ErrNotOwned},
		{name: "other-owner-allowed", keys: keys(f.keyID, "https://actor.example/users/bob", f.rsaPub), v: ldsig.Verifier{DisableActorCheck: true}},
		{name: "body-over-limit", v: ldsig.Verifier{MaxBodyBytes: 1024}, want: ldsig.ErrTooComplex},
		{name: "object-id-made-blank", edit: func(m map[string]any) { m["object"].(map[string]any)["id"] = "_:b0" }, want: ldsig.ErrBadSignature},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := f.body
			if tc.edit != nil {
				m := decode(t, body)
				tc.edit(m)
				body = encode(t, m)
			}
			if tc.raw != nil {
				body = tc.raw(body)
			}
			v := tc.v
			v.Keys = tc.keys
			if v.Keys == nil {
				v.Keys = keys(f.keyID, f.actor, f.rsaPub)
			}
			id, owner, err := v.VerifyActivity(context.Background(), body)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("VerifyActivity: %v", err)
				}
				if id.IsZero() || owner == "" {
					t.Fatalf("got %q, %q", id, owner)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("VerifyActivity: %v, want %v", err, tc.want)
			}
		})
	}
}

func anyKey(owner string, pub crypto.PublicKey) sig.KeyResolver {
	return sig.KeyResolverFunc(func(context.Context, sig.KeyID) (*sig.Key, error) {
		return &sig.Key{Public: pub, Owner: owner}, nil
	})
}

// TestFedifyProofDetached checks the eddsa-jcs-2022 proof of the same
// body: Fedify made it before the RsaSignature2017 signature, so it
// verifies over the document with signature detached, and not with it.
func TestFedifyProofDetached(t *testing.T) {
	t.Parallel()
	f := loadFedify(t)
	doc := decode(t, f.body)
	p, err := sig.VerifyProof(ldsig.Detach(doc), f.edPub)
	if err != nil {
		t.Fatalf("VerifyProof(Detach(doc)): %v", err)
	}
	if p.VerificationMethod != f.edKeyID {
		t.Fatalf("verificationMethod %q", p.VerificationMethod)
	}
	if _, err := sig.VerifyProof(doc, f.edPub); !errors.Is(err, sig.ErrBadSignature) {
		t.Fatalf("VerifyProof with signature attached: %v, want ErrBadSignature", err)
	}
	if _, ok := doc["signature"]; !ok {
		t.Fatal("Detach changed its argument")
	}
}

// TestUnknownContextError names contexts the package does not ship,
// among them one served by a loopback server, and checks that each is
// refused with its URL and that the server saw no request.
func TestUnknownContextError(t *testing.T) {
	t.Parallel()
	f := loadFedify(t)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/ld+json")
		_, _ = w.Write([]byte(`{"@context":{"madeUp":"https://example.com/ns#madeUp"}}`))
	}))
	defer srv.Close()
	for _, u := range []string{srv.URL + "/context.jsonld", "https://contexts.example/ctx", "file:///etc/passwd", "/etc/passwd", "testdata/ctx.json"} {
		m := decode(t, f.body)
		appendContext(m, u)
		v := &ldsig.Verifier{Keys: keys(f.keyID, f.actor, f.rsaPub)}
		_, _, err := v.VerifyActivity(context.Background(), encode(t, m))
		var uc *ldsig.UnknownContextError
		if !errors.As(err, &uc) || uc.URL != u || !strings.Contains(err.Error(), "never fetched") {
			t.Fatalf("%s: %v, want *UnknownContextError", u, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the context server saw %d requests", n)
	}
}

// TestSignVerifyFedifyActorUpdate signs, with the project's test key, an
// Update carrying the shared Fedify actor document (read in place): its
// seven contexts (DID, Multikey, GoToSocial and Mastodon's inline terms
// among them) must load from the shipped copies and pass the override
// check.
func TestSignVerifyFedifyActorUpdate(t *testing.T) {
	t.Parallel()
	key := testKey(t)
	actor := decode(t, fixture.Shared(t, "ldsig/fedify-actor.json"))
	update := map[string]any{
		"@context": actor["@context"],
		"id":       actor["id"].(string) + "#update/1",
		"type":     "Update",
		"actor":    actor["id"],
		"to":       "https://www.w3.org/ns/activitystreams#Public",
		"object":   maps.Clone(actor),
	}
	delete(update["object"].(map[string]any), "@context")
	signed, err := ldsig.Sign(encode(t, update), key, &ldsig.SignOpts{Creator: actor["id"].(string) + "#main-key", Created: mCreated})
	if err != nil {
		t.Fatal(err)
	}
	v := &ldsig.Verifier{Keys: keys(actor["id"].(string)+"#main-key", actor["id"].(string), &key.PublicKey)}
	if _, _, err := v.VerifyActivity(context.Background(), signed); err != nil {
		t.Fatalf("VerifyActivity: %v", err)
	}
	m := decode(t, signed)
	m["object"].(map[string]any)["preferredUsername"] = "mallory"
	if _, _, err := v.VerifyActivity(context.Background(), encode(t, m)); !errors.Is(err, ldsig.ErrBadSignature) {
		t.Fatalf("changed preferredUsername: %v, want ErrBadSignature", err)
	}
}
