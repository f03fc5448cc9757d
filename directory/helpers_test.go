package directory_test

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/sig"
)

const (
	actor = "https://relay.example/actor"
	base  = "https://relay.example"
	keyID = actor + "#main-key"
	dirO  = "https://directory.example"
)

// ownKeyPath is fedkit's own TEST-ONLY key.
const ownKeyPath = "../testdata/directory/testKey.TEST-ONLY.pem"

func loadKey(t testing.TB, pemBytes []byte) crypto.Signer {
	t.Helper()
	k, err := sig.ParsePrivateKeyPEM(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var (
	sharedKeyOnce sync.Once
	genKey        *rsa.PrivateKey
)

// testKey returns one RSA-2048 key per test binary for flow tests.
func testKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	sharedKeyOnce.Do(func() {
		b, err := os.ReadFile(ownKeyPath)
		if err != nil {
			panic(err)
		}
		k, err := sig.ParsePrivateKeyPEM(b)
		if err != nil {
			panic(err)
		}
		genKey = k.(*rsa.PrivateKey)
	})
	return genKey
}

// vector is the shared signing-vector format, in its key order.
type vector struct {
	Method         string `json:"method"`
	Scheme         string `json:"scheme"`
	Authority      string `json:"authority"`
	Target         string `json:"target"`
	ContentType    string `json:"content_type"`
	ContentDigest  string `json:"content_digest"`
	Date           string `json:"date"`
	Body           string `json:"body"`
	SignatureInput string `json:"signature_input"`
	Signature      string `json:"signature"`
	KeyID          string `json:"key_id"`
	KeyOwner       string `json:"key_owner"`
	KeyActor       string `json:"key_actor"`
	PublicKeyPEM   string `json:"public_key_pem"`
}

func decodeVector(t testing.TB, b []byte) vector {
	t.Helper()
	var v vector
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// capture is a Doer that records requests and answers success.
type capture struct {
	mu   sync.Mutex
	reqs []*http.Request
	body [][]byte
}

func (c *capture) Do(r *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.reqs = append(c.reqs, r)
	c.body = append(c.body, b)
	c.mu.Unlock()
	var in struct {
		V  int    `json:"protocol_version"`
		Op string `json:"operation"`
	}
	json.Unmarshal(b, &in)
	out := map[string]string{"register": "created", "heartbeat": "recorded", "unregister": "removed"}[in.Op]
	sc := 200
	if out == "created" {
		sc = 201
	}
	resp, _ := json.Marshal(map[string]any{"protocol_version": in.V, "operation": in.Op, "outcome": out, "relay_actor": actor})
	return jsonResponse(r, sc, string(resp)+"\n"), nil
}

func jsonResponse(r *http.Request, sc int, body string) *http.Response {
	return &http.Response{StatusCode: sc, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewBufferString(body)), Request: r, ContentLength: int64(len(body))}
}

// doerFunc adapts a function to directory.Doer.
type doerFunc func(*http.Request) (*http.Response, error)

func (f doerFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

func fixedNonce(n string) func() (string, error) { return func() (string, error) { return n, nil } }

func enabled(origin string) []directory.Entry {
	return []directory.Entry{{Origin: origin, Enabled: true}}
}
