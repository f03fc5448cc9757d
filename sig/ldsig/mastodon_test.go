package ldsig_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/ldsig"
)

var update = flag.Bool("update", false, "rewrite testdata/*.signed.json")

const (
	mActor = "https://mastodon.example/users/alice"
	mKeyID = mActor + "#main-key"
)

var mCreated = time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)

// Activities shaped as Mastodon sends the ones it LD-signs (public
// Create, Announce, and the Delete of an account), with Mastodon's
// @context: ActivityStreams, security v1 where it names keys, and its
// inline terms.
var mastodonBodies = []struct{ name, body string }{
	{"create-note", `{"@context":["https://www.w3.org/ns/activitystreams",{"ostatus":"http://ostatus.org#","atomUri":"ostatus:atomUri","inReplyToAtomUri":"ostatus:inReplyToAtomUri","conversation":"ostatus:conversation","sensitive":"as:sensitive","toot":"http://joinmastodon.org/ns#","votersCount":"toot:votersCount","Hashtag":"as:Hashtag","blurhash":"toot:blurhash","focalPoint":{"@container":"@list","@id":"toot:focalPoint"}}],"id":"https://mastodon.example/users/alice/statuses/1/activity","type":"Create","actor":"https://mastodon.example/users/alice","published":"2026-12-01T20:00:00Z","to":["https://www.w3.org/ns/activitystreams#Public"],"cc":["https://mastodon.example/users/alice/followers","https://fedify.example/users/bob"],"object":{"id":"https://mastodon.example/users/alice/statuses/1","type":"Note","summary":null,"inReplyTo":null,"published":"2026-12-01T20:00:00Z","url":"https://mastodon.example/@alice/1","attributedTo":"https://mastodon.example/users/alice","to":["https://www.w3.org/ns/activitystreams#Public"],"cc":["https://mastodon.example/users/alice/followers","https://fedify.example/users/bob"],"sensitive":false,"atomUri":"https://mastodon.example/users/alice/statuses/1","inReplyToAtomUri":null,"conversation":"tag:mastodon.example,2026-12-01:objectId=1:objectType=Conversation","content":"<p>Hello <span class=\"h-card\"><a href=\"https://fedify.example/@bob\" class=\"u-url mention\">@<span>bob</span></a></span> &amp; <a href=\"https://mastodon.example/tags/go\" class=\"mention hashtag\" rel=\"tag\">#<span>go</span></a></p>","contentMap":{"en":"<p>Hello <span class=\"h-card\"><a href=\"https://fedify.example/@bob\" class=\"u-url mention\">@<span>bob</span></a></span> &amp; <a href=\"https://mastodon.example/tags/go\" class=\"mention hashtag\" rel=\"tag\">#<span>go</span></a></p>"},"attachment":[{"type":"Document","mediaType":"image/png","url":"https://mastodon.example/media/1.png","name":"a picture","blurhash":"UBL_:rOpGG-oBUNG,qRj2so|=eE1w^n4S5NH","focalPoint":[0.0,0.0],"width":640,"height":480}],"tag":[{"type":"Mention","href":"https://fedify.example/users/bob","name":"@bob@fedify.example"},{"type":"Hashtag","href":"https://mastodon.example/tags/go","name":"#go"}],"replies":{"id":"https://mastodon.example/users/alice/statuses/1/replies","type":"Collection","first":{"type":"CollectionPage","next":"https://mastodon.example/users/alice/statuses/1/replies?only_other_accounts=true&page=true","partOf":"https://mastodon.example/users/alice/statuses/1/replies","items":[]}}}}`},
	{"announce", `{"@context":"https://www.w3.org/ns/activitystreams","id":"https://mastodon.example/users/alice/statuses/2/activity","type":"Announce","actor":"https://mastodon.example/users/alice","published":"2026-12-01T20:00:00Z","to":["https://www.w3.org/ns/activitystreams#Public"],"cc":["https://fedify.example/users/bob","https://mastodon.example/users/alice/followers"],"object":"https://fedify.example/users/bob/notes/7"}`},
	{"delete-account", `{"@context":["https://www.w3.org/ns/activitystreams","https://w3id.org/security/v1"],"id":"https://mastodon.example/users/alice#delete","type":"Delete","actor":"https://mastodon.example/users/alice","to":["https://www.w3.org/ns/activitystreams#Public"],"object":"https://mastodon.example/users/alice"}`},
}

// TestSignVerifyMastodon signs Mastodon-shaped activities with the
// project's test key, checks the result against a golden copy (RSA PKCS#1
// v1.5 is deterministic, so any change in canonicalisation shows), that
// Sign kept the body byte for byte, that the signature is shaped as
// Mastodon writes it, and that it verifies, and stops verifying when
// changed.
func TestSignVerifyMastodon(t *testing.T) {
	t.Parallel()
	key := testKey(t)
	for _, tc := range mastodonBodies {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			signed, err := ldsig.Sign([]byte(tc.body), key, &ldsig.SignOpts{Creator: mKeyID, Created: mCreated.Add(500 * time.Millisecond)})
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "mastodon-"+tc.name+".signed.json")
			if *update {
				if err := os.WriteFile(golden, append(signed, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if !bytes.Equal(append(signed, '\n'), want) {
				t.Errorf("signed body differs from %s:\n%s", golden, signed)
			}
			if !bytes.HasPrefix(signed, []byte(tc.body[:len(tc.body)-1]+`,"signature":`)) {
				t.Errorf("Sign did not keep the body: %s", signed)
			}
			s := decode(t, signed)["signature"].(map[string]any)
			if got := slices.Sorted(maps.Keys(s)); !slices.Equal(got, []string{"created", "creator", "signatureValue", "type"}) {
				t.Errorf("signature members %v", got)
			}
			if s["created"] != "2026-12-01T20:00:00Z" || s["type"] != "RsaSignature2017" || s["creator"] != mKeyID {
				t.Errorf("signature %v", s)
			}
			checkSignedData(t, signed, &key.PublicKey)

			v := &ldsig.Verifier{Keys: keys(mKeyID, mActor, &key.PublicKey)}
			if _, _, err := v.VerifyActivity(context.Background(), signed); err != nil {
				t.Fatalf("VerifyActivity: %v", err)
			}
			m := decode(t, signed)
			m["id"] = m["id"].(string) + "x"
			if _, _, err := v.VerifyActivity(context.Background(), encode(t, m)); !errors.Is(err, ldsig.ErrBadSignature) {
				t.Fatalf("changed id: %v, want ErrBadSignature", err)
			}
		})
	}
}

// checkSignedData recomputes what LD Signatures 2017 sign, step by step
// through the exported canonicaliser, and checks the RSA signature by
// hand.
func checkSignedData(t *testing.T, signed []byte, pub *rsa.PublicKey) {
	t.Helper()
	doc := decode(t, signed)
	opts := maps.Clone(doc["signature"].(map[string]any))
	value, err := base64.StdEncoding.DecodeString(opts["signatureValue"].(string))
	if err != nil {
		t.Fatal(err)
	}
	delete(opts, "type")
	delete(opts, "signatureValue")
	opts["@context"] = "https://w3id.org/identity/v1"
	hexHash := func(v map[string]any) string {
		c, err := ldsig.Canonicalize(encode(t, v))
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256([]byte(c))
		return hex.EncodeToString(h[:])
	}
	h := sha256.Sum256([]byte(hexHash(opts) + hexHash(ldsig.Detach(doc))))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, h[:], value); err != nil {
		t.Fatalf("hand check: %v", err)
	}
}

// TestMastodonContextAttacks: on Mastodon's unprotected contexts a null
// may reset the context, which must not let a document redefine a term.
func TestMastodonContextAttacks(t *testing.T) {
	t.Parallel()
	key := testKey(t)
	signed, err := ldsig.Sign([]byte(mastodonBodies[1].body), key, &ldsig.SignOpts{Creator: mKeyID, Created: mCreated})
	if err != nil {
		t.Fatal(err)
	}
	v := &ldsig.Verifier{Keys: keys(mKeyID, mActor, &key.PublicKey)}
	m := decode(t, signed)
	// A null drops ActivityStreams; the inline context that follows gives
	// every member back its meaning except that "to" and "cc" trade places.
	m["@context"] = []any{"https://www.w3.org/ns/activitystreams", nil, map[string]any{
		"as": "https://www.w3.org/ns/activitystreams#", "xsd": "http://www.w3.org/2001/XMLSchema#",
		"id": "@id", "type": "@type", "Announce": "as:Announce",
		"actor":     map[string]any{"@id": "as:actor", "@type": "@id"},
		"object":    map[string]any{"@id": "as:object", "@type": "@id"},
		"published": map[string]any{"@id": "as:published", "@type": "xsd:dateTime"},
		"to":        map[string]any{"@id": "as:cc", "@type": "@id"},
		"cc":        map[string]any{"@id": "as:to", "@type": "@id"},
	}}
	m["to"], m["cc"] = m["cc"], m["to"]
	if _, _, err := v.VerifyActivity(context.Background(), encode(t, m)); !errors.Is(err, ldsig.ErrContextOverride) {
		t.Fatalf("null reset and swap: %v, want ErrContextOverride", err)
	}
}

func TestSignErrors(t *testing.T) {
	t.Parallel()
	key := testKey(t)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	weak, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(mastodonBodies[1].body)
	signed, err := ldsig.Sign(body, key, &ldsig.SignOpts{Creator: mKeyID, Created: mCreated})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		body []byte
		key  crypto.Signer
		opts *ldsig.SignOpts
		want error // nil: any error
	}{
		{"ed25519-key", body, edKey, &ldsig.SignOpts{Creator: mKeyID}, ldsig.ErrUnsupportedType},
		{"weak-rsa", body, weak, &ldsig.SignOpts{Creator: mKeyID}, sig.ErrWeakKey},
		{"no-creator", body, key, nil, nil},
		{"bad-creator", body, key, &ldsig.SignOpts{Creator: "a\"b"}, sig.ErrMalformed},
		{"already-signed", signed, key, &ldsig.SignOpts{Creator: mKeyID}, nil},
		{"not-an-object", []byte(`["x"]`), key, &ldsig.SignOpts{Creator: mKeyID}, ldsig.ErrMalformed},
		{"unknown-context", []byte(`{"@context":"https://contexts.example/x","type":"Note"}`), key, &ldsig.SignOpts{Creator: mKeyID}, ldsig.ErrUnknownContext},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ldsig.Sign(tc.body, tc.key, tc.opts)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("Sign: %v, want %v", err, tc.want)
			}
		})
	}
}

// TestConcurrentVerify runs verifications side by side (under -race in
// CI) over the shared parsed contexts.
func TestConcurrentVerify(t *testing.T) {
	t.Parallel()
	f := loadFedify(t)
	v := &ldsig.Verifier{Keys: keys(f.keyID, f.actor, f.rsaPub)}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, _, err := v.VerifyActivity(context.Background(), f.body); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
