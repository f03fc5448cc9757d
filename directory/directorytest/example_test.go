package directorytest_test

import (
	"context"
	"crypto"
	"crypto/tls"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/directorytest"
	"github.com/fedkit/fedkit/sig"
)

func ExampleNew() {
	pemBytes, _ := os.ReadFile("../../testdata/directory/testKey.TEST-ONLY.pem")
	key, err := sig.ParsePrivateKeyPEM(pemBytes)
	if err != nil {
		log.Fatal(err)
	}
	d := directorytest.New(&directorytest.Config{Schema: 4, Versions: []directory.Version{1, 2}, EnrollmentOpen: true,
		Keys: map[string]crypto.PublicKey{"https://relay.example/actor#main-key": key.Public()}})
	c, err := directory.New(key, &directory.Config{Actor: "https://relay.example/actor", PublicBaseURL: "https://relay.example",
		Directories: []directory.Entry{{Origin: d.Origin(), Enabled: true}}, HTTP: d.Doer()})
	if err != nil {
		log.Fatal(err)
	}
	d.Enqueue(directorytest.Reply{StatusCode: 500, Code: directory.CodeInternalError})
	res, err := c.Sync(context.Background(), d.Origin(), nil)
	fmt.Println(res.Version, res.Outcome, res.Requests, err)
	for _, r := range d.Requests() {
		fmt.Println(r.Operation, r.StatusCode, r.Code)
	}
	// Output:
	// v2 created 2 <nil>
	// register 500 internal_error
	// register 201
}

func ExampleVerifyBase() {
	// The v1 vector of the Directory protocol reference (spec section 8.3).
	pub, _ := sig.ParsePublicKeyPEM([]byte("-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAtl1oFS/LyBBlygdHp7be\npNFgFvVLehdU31ReuFwt1WYDNEIQa60tH3CyjpnFw2Hq8z5tRtTIJgMTROBI2CU7\nwgpC4IEO1jFpl4vRqJ7bcCQBib+6QI+9TCCI2qLgnCObfU8i6HWj4Z5fDMhKrMLM\nbdjLDVNGy7PRlVGR/b/Ootur4PXF2Xnxp+otum477/vT5SVNcJy6ZbFn//M6wo1i\nenKTnBOPjvMmz5JR8I6YczGJfmdrIPFdfjz24JT3fyIYRP6jUEo6mAyMIJReBN66\nLrehOa+tETyMPCHnponrhbrpq49t/0dQmtIorQeD5Yxi3BTbk3mJrd0sxvz5cPws\ndQIDAQAB\n-----END PUBLIC KEY-----\n"))
	err := directorytest.VerifyBase("POST", "directory.example", "/v1/relays/register",
		"sha-256=:nMqxyjnxJRsYFc3ao3rHES02EXcNrSLyC7b/8bP7kTI=:", "application/json", "Wed, 05 Aug 2026 12:34:56 GMT",
		`directory=("@method" "@authority" "@target-uri" "content-digest" "content-type" "date");keyid="https://relay.example/actor#main-key";alg="rsa-v1_5-sha256";tag="activity-relay-directory-v1";nonce="fixture-nonce-0001";created=1785933296;expires=1785933596`,
		"directory=:rQ0hu9I1CPczPvRV+HayGb5ov1jOdHTi36ErjMrD4Qu8k7BXKOuN9rpNOQ8YgJigNSMP05bkKg5jIJTED+xk2FO6E9GW6TDRu20v0N07aoRQi0c1Z4azlmr1Rpya0e0SJFy6a+WzfbHrCzGZdeztBb2nQsd+XHRA4ZG7MJJZ6+PR7cVGV+Dq36a0jwq8RY7aSml/PpCnUTf2Pfcja/ctXjhJa0iOSom0Xu/Um1u+NswIFe0PdNgURoBpxpgQizxCn+08JQndSU5koP5Eku6kzd9S+5d8ocJQxnweYNaEm1hCXqXTOFTVO25/R0c+BJAyJYej9EqvXxxwJYiz2SdYYA==:",
		pub)
	fmt.Println(err)
	// Output: <nil>
}

// A StateStore backend runs the conformance suite from its tests.
func ExampleTestStateStore() {
	_ = func(t *testing.T) { // func TestConformance(t *testing.T) in the backend's package
		directorytest.TestStateStore(t, func(testing.TB) directory.StateStore {
			return &directory.MemoryStateStore{} // a fresh, isolated store per call
		})
	}
}

// Over real TLS on loopback, through the Directory transport profile.
func ExampleServer_StartTLS() {
	_ = func(t *testing.T, key crypto.Signer) {
		d := directorytest.New(&directorytest.Config{EnrollmentOpen: true,
			Keys: map[string]crypto.PublicKey{"https://relay.example/actor#main-key": key.Public()}})
		hc := d.StartTLS(t) // serves https://directory.example:<port>, closed at cleanup
		c, err := directory.New(key, &directory.Config{Actor: "https://relay.example/actor", PublicBaseURL: "https://relay.example",
			Directories: []directory.Entry{{Origin: d.Origin(), Enabled: true}}, HTTP: hc})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Sync(context.Background(), d.Origin(), nil); err != nil {
			t.Fatal(err)
		}
	}
}

// A hand-written hostile Directory behind the same TLS and loopback setup.
func ExampleLoopbackClient() {
	_ = func(t *testing.T) {
		cert, pool := directorytest.TLSCert(t)
		ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://elsewhere.example/", http.StatusTemporaryRedirect)
		}))
		ts.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		ts.StartTLS()
		t.Cleanup(ts.Close)
		hc := directorytest.LoopbackClient(t, pool) // resolves directory.example to 127.0.0.1
		_ = hc                                      // pass as directory.Config.HTTP
	}
}

// The fake's error messages are fixed server texts; a client checks their
// length and discards them.
func ExampleMessage() {
	fmt.Println(directorytest.Message(directory.CodeRelayNotRegistered))
	fmt.Println(directorytest.ContentSecurityPolicy)
	// Output:
	// relay is not registered
	// default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'
}
