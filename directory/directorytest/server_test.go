package directorytest_test

import (
	"bytes"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/directorytest"
	"github.com/fedkit/fedkit/sig"
)

const (
	actor = "https://relay.example/actor"
	keyID = actor + "#main-key"
)

func key(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	b, err := os.ReadFile("../../testdata/directory/testKey.TEST-ONLY.pem")
	if err != nil {
		t.Fatal(err)
	}
	k, err := sig.ParsePrivateKeyPEM(b)
	if err != nil {
		t.Fatal(err)
	}
	return k.(*rsa.PrivateKey)
}

type req struct {
	method, target, body, tag, ctype string
	keyID                            string
	created                          time.Time
	lifetime                         time.Duration
	components                       []string
	extra                            func(*http.Request)
}

var comps = []string{"@method", "@authority", "@target-uri", "content-digest", "content-type", "date"}

// send signs r like a correct client unless a field says otherwise, and
// returns the fake's status code and error code.
func send(t *testing.T, s *directorytest.Server, r req) (int, string) {
	t.Helper()
	k := key(t)
	if r.method == "" {
		r.method = http.MethodPost
	}
	if r.ctype == "" {
		r.ctype = "application/json"
	}
	if r.keyID == "" {
		r.keyID = keyID
	}
	if r.created.IsZero() {
		r.created = time.Now().Truncate(time.Second)
	}
	if r.lifetime == 0 {
		r.lifetime = 300 * time.Second
	}
	if r.components == nil {
		r.components = comps
	}
	hr := httptest.NewRequest(r.method, "https://directory.example"+r.target, strings.NewReader(r.body))
	hr.Header.Set("Content-Type", r.ctype)
	hr.Header.Set("Content-Digest", sig.ContentDigest([]byte(r.body)))
	hr.Header.Set("Date", r.created.UTC().Format(http.TimeFormat))
	if err := sig.SignRFC9421(hr, k, &sig.SignOpts{Label: "directory", Components: r.components, KeyID: r.keyID,
		Alg: sig.AlgRSAv15SHA256, Tag: r.tag, Nonce: "n-" + time.Now().Format(time.RFC3339Nano),
		Created: r.created, Expires: r.created.Add(r.lifetime)}); err != nil {
		t.Fatal(err)
	}
	if r.extra != nil {
		r.extra(hr)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, hr)
	var env struct {
		Error struct{ Code string } `json:"error"`
	}
	json.Unmarshal(rec.Body.Bytes(), &env)
	if rec.Header().Get("Content-Type") != "application/json" && rec.Code != 404 {
		t.Fatalf("content type %q", rec.Header().Get("Content-Type"))
	}
	return rec.Code, env.Error.Code
}

func newServer(t *testing.T) *directorytest.Server {
	s := directorytest.New(&directorytest.Config{EnrollmentOpen: true})
	s.AddKey(keyID, key(t).Public())
	return s
}

const (
	v1reg = `{"protocol_version":1,"operation":"register","relay_actor":"https://relay.example/actor","public_base_url":"https://relay.example"}`
	v1hb  = `{"protocol_version":1,"operation":"heartbeat","relay_actor":"https://relay.example/actor"}`
	v3hb  = `{"protocol_version":3,"operation":"heartbeat","relay_actor":"https://relay.example/actor","telemetry":{"participating_instance_count":4}}`
	v3un  = `{"protocol_version":3,"operation":"unregister","relay_actor":"https://relay.example/actor"}`
	prof  = `{"participation_mode":"","availability":"","relay_type":"","languages":[],"countries":[],"regions":[],"topics":[],"contact_fediverse":"","contact_email":"","contact_url":"","participation_url":"","notes":""}`
)

// TestServerRejects: the fake enforces the server side of spec sections
// 1, 2, 4 and 8.
func TestServerRejects(t *testing.T) {
	tag1, tag2, tag3 := directory.V1.Tag(), directory.V2.Tag(), directory.V3.Tag()
	cases := []struct {
		name string
		r    req
		sc   int
		code string
	}{
		{"valid v1 register", req{target: "/v1/relays/register", body: v1reg, tag: tag1}, 201, ""},
		{"valid v2 register", req{target: "/v2/relays/register", tag: tag2, body: `{"protocol_version":2,"operation":"register","relay_actor":"https://relay.example/actor","public_base_url":"https://relay.example","profile":` + prof + `}`}, 201, ""},
		{"v2 legacy telemetry accepted", req{target: "/v2/relays/register", tag: tag2, body: `{"protocol_version":2,"operation":"register","relay_actor":"https://relay.example/actor","public_base_url":"https://relay.example","profile":` + prof + `,"telemetry":{"receiving_instance_count":3}}`}, 201, ""},
		{"GET on lifecycle route", req{method: http.MethodGet, target: "/v1/relays/register", tag: tag1}, 405, "invalid_request"},
		{"query in target", req{target: "/v1/relays/register?x=1", body: v1reg, tag: tag1}, 400, "invalid_request"},
		{"trailing slash", req{target: "/v1/relays/register/", body: v1reg, tag: tag1}, 404, ""},
		{"body/path mismatch", req{target: "/v1/relays/heartbeat", body: v1reg, tag: tag1}, 400, "invalid_request"},
		{"version 2 on v1 route", req{target: "/v1/relays/heartbeat", body: strings.Replace(v1hb, ":1,", ":2,", 1), tag: tag1}, 400, "unsupported_protocol_version"},
		{"unknown member", req{target: "/v1/relays/heartbeat", body: strings.Replace(v1hb, "}", `,"x":1}`, 1), tag: tag1}, 400, "invalid_request"},
		{"public_base_url on heartbeat", req{target: "/v1/relays/heartbeat", body: strings.Replace(v1hb, "}", `,"public_base_url":"https://relay.example"}`, 1), tag: tag1}, 400, "invalid_request"},
		{"duplicate member", req{target: "/v1/relays/heartbeat", body: strings.Replace(v1hb, "}", `,"operation":"heartbeat"}`, 1), tag: tag1}, 400, "invalid_request"},
		{"trailing value", req{target: "/v1/relays/heartbeat", body: v1hb + "{}", tag: tag1}, 400, "invalid_request"},
		{"telemetry on v3 unregister", req{target: "/v3/relays/unregister", body: strings.Replace(v3un, "}", `,"telemetry":{"participating_instance_count":1}}`, 1), tag: tag3}, 400, "invalid_request"},
		{"telemetry on v1", req{target: "/v1/relays/heartbeat", body: strings.Replace(v1hb, "}", `,"telemetry":{"participating_instance_count":1}}`, 1), tag: tag1}, 400, "invalid_request"},
		{"telemetry out of range", req{target: "/v3/relays/heartbeat", body: strings.Replace(v3hb, ":4", ":10000001", 1), tag: tag3}, 400, "invalid_request"},
		{"profile null", req{target: "/v2/relays/register", tag: tag2, body: `{"protocol_version":2,"operation":"register","relay_actor":"https://relay.example/actor","public_base_url":"https://relay.example","profile":null}`}, 400, "invalid_request"},
		{"profile 11 keys", req{target: "/v2/relays/register", tag: tag2, body: `{"protocol_version":2,"operation":"register","relay_actor":"https://relay.example/actor","public_base_url":"https://relay.example","profile":` + strings.Replace(prof, `,"notes":""`, "", 1) + `}`}, 400, "invalid_request"},
		{"base with slash", req{target: "/v1/relays/register", body: strings.Replace(v1reg, `example"}`, `example/"}`, 1), tag: tag1}, 400, "invalid_request"},
		{"actor dot segment", req{target: "/v1/relays/heartbeat", body: strings.Replace(v1hb, "/actor", "/./actor", 1), tag: tag1, keyID: "https://relay.example/./actor#main-key"}, 400, "invalid_request"},
		{"wrong content type is 401, as on the real server", req{target: "/v1/relays/register", body: v1reg, tag: tag1, ctype: "application/json; charset=utf-8"}, 401, "authentication_failed"},
		{"oversize body", req{target: "/v1/relays/register", body: v1reg[:len(v1reg)-1] + strings.Repeat(" ", 65536) + "}", tag: tag1}, 413, "invalid_request"},
		{"tag of another version", req{target: "/v1/relays/register", body: v1reg, tag: tag2}, 401, "authentication_failed"},
		{"no tag", req{target: "/v1/relays/register", body: v1reg}, 401, "authentication_failed"},
		{"expires beyond 300 s", req{target: "/v1/relays/register", body: v1reg, tag: tag1, lifetime: 301 * time.Second}, 401, "authentication_failed"},
		{"expires 180 s accepted", req{target: "/v1/relays/register", body: v1reg, tag: tag1, lifetime: 180 * time.Second}, 201, ""},
		{"created 6 min ago", req{target: "/v1/relays/register", body: v1reg, tag: tag1, created: time.Now().Add(-6 * time.Minute).Truncate(time.Second)}, 401, "authentication_failed"},
		{"created 1 min ahead", req{target: "/v1/relays/register", body: v1reg, tag: tag1, created: time.Now().Add(time.Minute).Truncate(time.Second)}, 401, "authentication_failed"},
		{"missing component", req{target: "/v1/relays/register", body: v1reg, tag: tag1, components: comps[:5]}, 401, "authentication_failed"},
		{"keyid of another actor", req{target: "/v1/relays/register", body: v1reg, tag: tag1, keyID: "https://other.example/actor#main-key"}, 401, "authentication_failed"},
		{"digest mismatch", req{target: "/v1/relays/register", body: v1reg, tag: tag1, extra: func(r *http.Request) {
			r.Header.Set("Content-Digest", sig.ContentDigest([]byte("x")))
		}}, 401, "authentication_failed"},
		{"two signatures", req{target: "/v1/relays/register", body: v1reg, tag: tag1, extra: func(r *http.Request) {
			r.Header.Add("Signature-Input", `extra=("@method");created=1`)
		}}, 401, "authentication_failed"},
		{"heartbeat unregistered", req{target: "/v1/relays/heartbeat", body: v1hb, tag: tag1}, 409, "relay_not_registered"},
		{"unrouted v4", req{target: "/v4/relays/register", body: v1reg, tag: tag1}, 404, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc, code := send(t, newServer(t), tc.r)
			if sc != tc.sc || code != tc.code {
				t.Fatalf("got %d %q, want %d %q", sc, code, tc.sc, tc.code)
			}
		})
	}
}

func TestServerReplayAndRateLimit(t *testing.T) {
	s := newServer(t)
	now := time.Now().Truncate(time.Second)
	k := key(t)
	mk := func(nonce string) *http.Request {
		hr := httptest.NewRequest(http.MethodPost, "https://directory.example/v1/relays/register", strings.NewReader(v1reg))
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Content-Digest", sig.ContentDigest([]byte(v1reg)))
		hr.Header.Set("Date", now.UTC().Format(http.TimeFormat))
		sig.SignRFC9421(hr, k, &sig.SignOpts{Label: "directory", Components: comps, KeyID: keyID, Alg: sig.AlgRSAv15SHA256,
			Tag: directory.V1.Tag(), Nonce: nonce, Created: now, Expires: now.Add(300 * time.Second)})
		return hr
	}
	do := func(r *http.Request) (int, http.Header) {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		return rec.Code, rec.Header()
	}
	if sc, _ := do(mk("a")); sc != 201 {
		t.Fatal(sc)
	}
	if sc, _ := do(mk("a")); sc != 409 {
		t.Fatalf("replay: %d", sc)
	}
	for i := 0; i < 9; i++ {
		if sc, _ := do(mk("n" + string(rune('0'+i)))); sc != 200 {
			t.Fatalf("register %d: %d", i, sc)
		}
	}
	sc, h := do(mk("over"))
	if sc != 429 || h.Get("Retry-After") == "" {
		t.Fatalf("11th request: %d %v", sc, h)
	}
}

func TestStatusSchemas(t *testing.T) {
	for _, schema := range []int{2, 3, 4} {
		s := directorytest.New(&directorytest.Config{Schema: schema})
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "https://directory.example/v1/status", nil))
		st, err := directory.ParseStatus(rec.Body.Bytes(), s.Origin())
		if err != nil || st.SchemaVersion != schema {
			t.Fatalf("schema %d: %v", schema, err)
		}
		if !bytes.HasSuffix(rec.Body.Bytes(), []byte("}\n")) || rec.Header().Get("Cache-Control") != "no-store" {
			t.Fatalf("framing %q %v", rec.Body.String(), rec.Header())
		}
	}
}
