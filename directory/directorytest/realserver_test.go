package directorytest_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/directorytest"
	"github.com/fedkit/fedkit/sig"
)

// The tests in this file pin each difference found by running the same
// requests against the real Activity-Relay Directory (v0.1.0-rc3, status
// schema 3) and the fake side by side (issue 17, items 1-9). Each is named
// after the difference it fixes.

// signed builds a correctly signed v1 request with the given body,
// Content-Type and Host, signing @authority as the Directory's own.
func signed(t *testing.T, target, body, ctype, host, nonce string) *http.Request {
	t.Helper()
	now := time.Now().Truncate(time.Second)
	hr := httptest.NewRequest(http.MethodPost, "https://directory.example"+target, strings.NewReader(body))
	hr.Header.Set("Content-Type", ctype)
	hr.Header.Set("Content-Digest", sig.ContentDigest([]byte(body)))
	hr.Header.Set("Date", now.UTC().Format(http.TimeFormat))
	if err := sig.SignRFC9421(hr, key(t), &sig.SignOpts{Label: "directory", Components: comps, KeyID: keyID, Alg: sig.AlgRSAv15SHA256,
		Tag: directory.V1.Tag(), Nonce: nonce, Created: now, Expires: now.Add(300 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	hr.Host = host
	return hr
}

func serve(s *directorytest.Server, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	return rec
}

func errCode(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var env struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		t.Fatalf("body %q: %v", rec.Body, err)
	}
	return env.Error.Code
}

// Difference 1: a request whose Host is not the Directory's public host is
// an authentication failure (the signature binds @authority to it), even
// when the signature itself was made over the right authority.
func TestRealForeignHostIs401(t *testing.T) {
	s := newServer(t)
	rec := serve(s, signed(t, "/v1/relays/register", v1reg, "application/json", "other.example", "n1"))
	if rec.Code != 401 || errCode(t, rec) != "authentication_failed" {
		t.Fatalf("foreign Host: %d %s, want 401 authentication_failed", rec.Code, rec.Body)
	}
	// The same request with the right Host passes.
	if rec := serve(s, signed(t, "/v1/relays/register", v1reg, "application/json", "directory.example", "n2")); rec.Code != 201 {
		t.Fatalf("own Host: %d %s", rec.Code, rec.Body)
	}
}

// Difference 2: Content-Type is a signed component whose value must be
// exactly application/json; a parameter fails authentication (401), it is
// not a malformed request (400).
func TestRealCharsetContentTypeIs401(t *testing.T) {
	for _, ct := range []string{"application/json; charset=utf-8", "text/plain", "Application/JSON"} {
		rec := serve(newServer(t), signed(t, "/v1/relays/register", v1reg, ct, "directory.example", "n1"))
		if rec.Code != 401 || errCode(t, rec) != "authentication_failed" {
			t.Errorf("Content-Type %q: %d %s, want 401 authentication_failed", ct, rec.Code, rec.Body)
		}
	}
}

// Difference 3: the body is read and decoded before Content-Type is
// judged, and a body without protocol_version is an unsupported version.
func TestRealEmptyObjectBodyIsUnsupportedVersion(t *testing.T) {
	for _, ct := range []string{"application/json", "text/plain"} {
		rec := serve(newServer(t), signed(t, "/v1/relays/register", "{}", ct, "directory.example", "n1"))
		if rec.Code != 400 || errCode(t, rec) != "unsupported_protocol_version" {
			t.Errorf("body {} with %q: %d %s, want 400 unsupported_protocol_version", ct, rec.Code, rec.Body)
		}
	}
	// Malformed JSON stays invalid_request.
	if rec := serve(newServer(t), signed(t, "/v1/relays/register", "{", "text/plain", "directory.example", "n1")); rec.Code != 400 || errCode(t, rec) != "invalid_request" {
		t.Errorf("body {: %d %s", rec.Code, rec.Body)
	}
}

// Difference 4: a suspended relay that is not registered gets 409
// relay_not_registered on heartbeat (the registration is looked up first),
// and only the register that follows meets 403 relay_suspended.
func TestRealSuspendedNotRegisteredHeartbeatIs409(t *testing.T) {
	s := newServer(t)
	s.Suspend(actor, true)
	if sc, code := send(t, s, req{target: "/v1/relays/heartbeat", body: v1hb, tag: directory.V1.Tag()}); sc != 409 || code != "relay_not_registered" {
		t.Fatalf("heartbeat: %d %s, want 409 relay_not_registered", sc, code)
	}
	if sc, code := send(t, s, req{target: "/v1/relays/register", body: v1reg, tag: directory.V1.Tag()}); sc != 403 || code != "relay_suspended" {
		t.Fatalf("register: %d %s, want 403 relay_suspended", sc, code)
	}
	// Registered and then suspended: the heartbeat is refused as suspended.
	s.Suspend(actor, false)
	send(t, s, req{target: "/v1/relays/register", body: v1reg, tag: directory.V1.Tag()})
	s.Suspend(actor, true)
	if sc, code := send(t, s, req{target: "/v1/relays/heartbeat", body: v1hb, tag: directory.V1.Tag()}); sc != 403 || code != "relay_suspended" {
		t.Fatalf("registered, suspended heartbeat: %d %s", sc, code)
	}
}

// Difference 5: the source rate limit (per operation: burst 60, one token
// a second, Retry-After: 1) runs before any other work, even for an
// unsigned request; the per-actor limit (burst 10, one a minute) after
// authentication. Both are configurable and can be switched off.
func TestRealRateLimits(t *testing.T) {
	t.Run("source default burst 60 refill 1/s", func(t *testing.T) {
		now := time.Unix(1_800_000_000, 0)
		s := directorytest.New(&directorytest.Config{Now: func() time.Time { return now }})
		unsigned := func() *httptest.ResponseRecorder {
			r := httptest.NewRequest(http.MethodPost, "https://directory.example/v1/relays/heartbeat", strings.NewReader(v1hb))
			r.Header.Set("Content-Type", "application/json")
			return serve(s, r)
		}
		for i := range directorytest.SourceRateBurstDefault {
			if rec := unsigned(); rec.Code != 401 {
				t.Fatalf("request %d: %d", i+1, rec.Code)
			}
		}
		rec := unsigned()
		if rec.Code != 429 || errCode(t, rec) != "rate_limited" || rec.Header().Get("Retry-After") != "1" {
			t.Fatalf("61st request: %d %s Retry-After %q, want 429 rate_limited, 1", rec.Code, rec.Body, rec.Header().Get("Retry-After"))
		}
		// Per operation: register has its own bucket.
		r := httptest.NewRequest(http.MethodPost, "https://directory.example/v1/relays/register", strings.NewReader(v1reg))
		if rec := serve(s, r); rec.Code == 429 {
			t.Fatal("register shares heartbeat's source bucket")
		}
		now = now.Add(time.Second)
		if rec := unsigned(); rec.Code != 401 {
			t.Fatalf("after refill: %d", rec.Code)
		}
	})
	t.Run("source configurable", func(t *testing.T) {
		s := directorytest.New(&directorytest.Config{SourceRateBurst: 2, SourceRateRefill: 30 * time.Second})
		var last *httptest.ResponseRecorder
		for range 3 {
			last = serve(s, httptest.NewRequest(http.MethodPost, "https://directory.example/v1/relays/heartbeat", strings.NewReader(v1hb)))
		}
		if ra, _ := strconv.Atoi(last.Header().Get("Retry-After")); last.Code != 429 || ra < 29 || ra > 30 {
			t.Fatalf("third request: %d Retry-After %q", last.Code, last.Header().Get("Retry-After"))
		}
	})
	t.Run("actor default burst 10 refill 1/min", func(t *testing.T) {
		now := time.Now().Truncate(time.Second)
		s := directorytest.New(&directorytest.Config{EnrollmentOpen: true, Now: func() time.Time { return now }})
		s.AddKey(keyID, key(t).Public())
		send(t, s, req{target: "/v1/relays/register", body: v1reg, tag: directory.V1.Tag(), created: now})
		for i := range directorytest.ActorRateBurstDefault {
			rec := serve(s, signed(t, "/v1/relays/heartbeat", v1hb, "application/json", "directory.example", "hb"+strconv.Itoa(i)))
			if rec.Code != 200 {
				t.Fatalf("heartbeat %d: %d %s", i+1, rec.Code, rec.Body)
			}
		}
		now = now.Add(7 * time.Second)
		rec := serve(s, signed(t, "/v1/relays/heartbeat", v1hb, "application/json", "directory.example", "hb-over"))
		// Signed at real time, checked at the fake clock: still inside the window.
		if rec.Code != 429 || errCode(t, rec) != "rate_limited" || rec.Header().Get("Retry-After") != "53" {
			t.Fatalf("11th heartbeat: %d %s Retry-After %q, want 429 and 53", rec.Code, rec.Body, rec.Header().Get("Retry-After"))
		}
	})
	t.Run("disabled", func(t *testing.T) {
		s := directorytest.New(&directorytest.Config{DisableRateLimits: true})
		for i := range 100 {
			r := httptest.NewRequest(http.MethodPost, "https://directory.example/v1/relays/heartbeat", strings.NewReader(v1hb))
			if rec := serve(s, r); rec.Code == 429 {
				t.Fatalf("request %d limited", i+1)
			}
		}
	})
}

// Difference 6: POST /v1/status is the router's 405: text/plain, Allow:
// GET, HEAD, and no Cache-Control (the JSON writer's no-store is not
// involved).
func TestRealPostStatusIs405TextPlain(t *testing.T) {
	rec := serve(newServer(t), httptest.NewRequest(http.MethodPost, "https://directory.example/v1/status", strings.NewReader("{}")))
	h := rec.Header()
	if rec.Code != 405 || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") || h.Get("Allow") != "GET, HEAD" {
		t.Fatalf("%d %v %q", rec.Code, h, rec.Body)
	}
	if _, ok := h["Cache-Control"]; ok {
		t.Fatalf("Cache-Control %q on the router's 405", h.Get("Cache-Control"))
	}
}

// Difference 7: the status document reports the public listing as the
// Directory configures it (off by default, as DIRECTORY_PUBLIC_LISTING_ENABLED
// is), and a Directory whose lifecycle is switched off reports
// lifecycle_enabled false, not only lifecycle_available false.
func TestRealStatusListingAndLifecycle(t *testing.T) {
	status := func(s *directorytest.Server) *directory.Status {
		t.Helper()
		rec := serve(s, httptest.NewRequest(http.MethodGet, "https://directory.example/v1/status", nil))
		st, err := directory.ParseStatus(rec.Body.Bytes(), s.Origin())
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := status(directorytest.New(&directorytest.Config{Schema: 3}))
	if st.PublicListingEnabled || st.PublicListingAvailable {
		t.Errorf("default public listing %v/%v, want off", st.PublicListingEnabled, st.PublicListingAvailable)
	}
	st = status(directorytest.New(&directorytest.Config{Schema: 3, PublicListing: true}))
	if !st.PublicListingEnabled || !st.PublicListingAvailable {
		t.Errorf("PublicListing: %v/%v, want on", st.PublicListingEnabled, st.PublicListingAvailable)
	}
	s := directorytest.New(nil)
	s.SetLifecycleAvailable(false)
	if st := status(s); st.LifecycleEnabled || st.LifecycleAvailable {
		t.Errorf("lifecycle off: enabled %v available %v, want both false", st.LifecycleEnabled, st.LifecycleAvailable)
	}
	// And the lifecycle routes answer 503 before any verification, as a
	// Directory that never built its verifier does.
	rec := serve(s, httptest.NewRequest(http.MethodPost, "https://directory.example/v1/relays/register", strings.NewReader(v1reg)))
	if rec.Code != 503 || errCode(t, rec) != "lifecycle_unavailable" {
		t.Errorf("unsigned POST with lifecycle off: %d %s", rec.Code, rec.Body)
	}
}

// Difference 8: bodies come out in the fixtures' key order, and every
// error message is fixed, plausible server text of 1-256 bytes (fedkit
// checks and discards it).
func TestRealKeyOrderAndMessages(t *testing.T) {
	s := newServer(t)
	rec := serve(s, signed(t, "/v1/relays/register", v1reg, "application/json", "directory.example", "n1"))
	if want := `{"protocol_version":1,"operation":"register","outcome":"created","relay_actor":"https://relay.example/actor"}` + "\n"; rec.Body.String() != want {
		t.Errorf("success body %q, want %q", rec.Body, want)
	}
	rec = serve(s, signed(t, "/v1/relays/heartbeat", v1reg, "application/json", "directory.example", "n2"))
	if !strings.HasPrefix(rec.Body.String(), `{"protocol_version":1,"error":{"code":"invalid_request","message":"`) {
		t.Errorf("error body %q not in fixture order", rec.Body)
	}
	for _, code := range []directory.ErrorCode{directory.CodeInvalidRequest, directory.CodeUnsupportedProtocolVersion,
		directory.CodeAuthenticationFailed, directory.CodeRelaySuspended, directory.CodeEnrollmentClosed,
		directory.CodeReplayDetected, directory.CodeRelayNotRegistered, directory.CodeRateLimited,
		directory.CodeInternalError, directory.CodeLifecycleUnavailable} {
		msg := directorytest.Message(code)
		if len(msg) == 0 || len(msg) > 256 || msg == "error" || strings.ContainsAny(msg, "\n\r") {
			t.Errorf("%s: message %q", code, msg)
		}
	}
	for code, want := range map[directory.ErrorCode]string{
		directory.CodeEnrollmentClosed:     "directory enrollment is closed",
		directory.CodeLifecycleUnavailable: "lifecycle service is unavailable",
		directory.CodeRelayNotRegistered:   "relay is not registered",
	} {
		if got := directorytest.Message(code); got != want {
			t.Errorf("%s: message %q, want the fixture's %q", code, got, want)
		}
	}
}

// Difference 9: the common security headers, the deny-by-default CSP
// (docs/PUBLIC-LISTING.md: scripts, images, fonts, connections, frames,
// objects, media, forms and base-URI changes denied) included, are on every
// response.
func TestRealSecurityHeaders(t *testing.T) {
	s := newServer(t)
	for name, r := range map[string]*http.Request{
		"status":        httptest.NewRequest(http.MethodGet, "https://directory.example/v1/status", nil),
		"lifecycle":     signed(t, "/v1/relays/register", v1reg, "application/json", "directory.example", "n1"),
		"error":         httptest.NewRequest(http.MethodPost, "https://directory.example/v1/relays/register", strings.NewReader("{")),
		"status 405":    httptest.NewRequest(http.MethodPost, "https://directory.example/v1/status", nil),
		"lifecycle 405": httptest.NewRequest(http.MethodGet, "https://directory.example/v1/relays/register", nil),
		"404":           httptest.NewRequest(http.MethodGet, "https://directory.example/v4/relays/register", nil),
	} {
		h := serve(s, r).Header()
		if got := h.Get("Content-Security-Policy"); got != directorytest.ContentSecurityPolicy {
			t.Errorf("%s: CSP %q", name, got)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: headers %v", name, h)
		}
	}
	for _, d := range []string{"default-src 'none'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"} {
		if !strings.Contains(directorytest.ContentSecurityPolicy, d) {
			t.Errorf("CSP lacks %s", d)
		}
	}
}
