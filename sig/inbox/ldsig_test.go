package inbox_test

import (
	"crypto/rand"
	"crypto/rsa"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/sig/inbox"
	"github.com/fedkit/fedkit/sig/ldsig"
)

var _ inbox.LDVerifier = (*ldsig.Verifier)(nil)

// TestInboxWithRealLDSignature runs the inbox with the real ldsig.Verifier:
// a Create by alice, signed by her RSA key with RsaSignature2017 and
// delivered over HTTP by a relay, is trusted through the LD signature; the
// same body with its content changed after signing is dropped.
func TestInboxWithRealLDSignature(t *testing.T) {
	t.Parallel()
	relay := newPeer(t, "https://relay.example/actor")
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	const author = "https://a.example/users/alice"
	keys := newKeyring(relay)
	keys.add(author+"#main-key", &rsaKey.PublicKey, author)
	body := create(author, "https://a.example/activities/1")
	signed, err := ldsig.Sign([]byte(body), rsaKey, &ldsig.SignOpts{
		Creator: author + "#main-key", Created: time.Date(2031, 7, 1, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		body  string
		trust inbox.Trust
	}{
		{"forwarded with the author's LD signature", string(signed), inbox.TrustLDSignature},
		{"content changed after signing", strings.Replace(string(signed), `"content":"hi"`, `"content":"pwned"`, 1), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := &recv{}
			h, err := inbox.New(keys, rc.receive, &inbox.Config{LD: &ldsig.Verifier{Keys: keys}})
			if err != nil {
				t.Fatal(err)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, post(t, relay.signer, tc.body))
			if w.Code != 202 {
				t.Fatalf("status %d %q; want 202", w.Code, w.Body)
			}
			a := rc.last()
			switch {
			case tc.trust == 0 && a != nil:
				t.Fatalf("a tampered activity reached the application (trust %v)", a.Trust)
			case tc.trust != 0 && (a == nil || a.Trust != tc.trust || a.Actor != author):
				t.Fatalf("received %+v; want actor %s trusted by %v", a, author, tc.trust)
			}
		})
	}
}
