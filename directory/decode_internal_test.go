package directory

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/internal/fixture"
)

const tActor = "https://relay.example/actor"

var jsonHdr = http.Header{"Content-Type": {"application/json"}}

// TestSharedFixturesStrictDecode: every shared fixture file decodes
// strictly, and each response file validates for its operation.
func TestSharedFixturesStrictDecode(t *testing.T) {
	t.Parallel()
	dir := fixture.SharedPath(t, "directory")
	files, err := filepath.Glob(filepath.Join(dir, "v*", "*.json"))
	if err != nil || len(files) != 17 {
		t.Fatalf("found %d fixture files (%v)", len(files), err)
	}
	for _, path := range files {
		rel, _ := filepath.Rel(dir, path)
		t.Run(rel, func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := decodeObject(b)
			if err != nil {
				t.Fatalf("strict decode: %v", err)
			}
			name := filepath.Base(path)
			op := Operation(strings.SplitN(name, "-", 2)[0])
			switch {
			case strings.Contains(name, "-response.") && op.valid():
				sc := 200
				if strings.Contains(name, "created") {
					sc = 201
				}
				out, err := decodeLifecycle(V1, op, tActor, sc, jsonHdr, b, time.Now())
				if err != nil || string(out) != strings.Split(name, ".")[1] {
					t.Fatalf("outcome %q, err %v", out, err)
				}
			case strings.HasPrefix(name, "error-response."):
				code, r := decodeErrorEnvelope(f, V1)
				if r != "" || !strings.EqualFold(strings.ReplaceAll(string(code), "_", "-"), strings.Split(name, ".")[1]) {
					t.Fatalf("code %q reason %q", code, r)
				}
			case strings.HasSuffix(name, "-request.valid.json"):
				want := []string{"protocol_version", "operation", "relay_actor"}
				if op == OpRegister {
					want = append(want, "public_base_url")
				}
				if err := f.only(want...); err != nil {
					t.Fatal(err)
				}
			case name == "content-digest.valid.json":
				if err := f.only("body", "content_digest"); err != nil {
					t.Fatal(err)
				}
			default:
				if err := f.only("method", "scheme", "authority", "target", "content_type", "content_digest", "date",
					"body", "signature_input", "signature", "key_id", "key_owner", "key_actor", "public_key_pem"); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestStrictJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   string
		want Reason // "" = ok
	}{
		{"plain", `{"a":1}`, ""},
		{"trailing newline", "{\"a\":1}\n", ""},
		{"duplicate top-level", `{"a":1,"a":1}`, ReasonDuplicate},
		{"trailing value", `{"a":1}{}`, ReasonTrailing},
		{"trailing garbage", `{"a":1} x`, ReasonTrailing},
		{"empty body", ``, ReasonJSON},
		{"invalid JSON", `{"a":}`, ReasonJSON},
		{"array top-level", `[1]`, ReasonJSON},
		{"invalid UTF-8", "{\"a\":\"\xff\"}", ReasonJSON},
		{"null", `null`, ReasonJSON},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeObject([]byte(tc.in))
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || reasonOf(err) != tc.want {
				t.Fatalf("got %v, want %s", err, tc.want)
			}
		})
	}
}

func okBody(v Version, op Operation, out Outcome) string {
	return `{"protocol_version":` + string(rune('0'+v)) + `,"operation":"` + string(op) + `","outcome":"` + string(out) + `","relay_actor":"` + tActor + `"}` + "\n"
}

func errBody(v Version, code, msg string) string {
	return `{"protocol_version":` + string(rune('0'+v)) + `,"error":{"code":"` + code + `","message":"` + msg + `"}}` + "\n"
}

// TestDecodeLifecycle covers the response checklist of spec section 13.
func TestDecodeLifecycle(t *testing.T) {
	t.Parallel()
	big := `{"protocol_version":1,"operation":"heartbeat","outcome":"recorded","relay_actor":"` + tActor + `"}`
	cases := []struct {
		name string
		v    Version
		op   Operation
		sc   int
		hdr  http.Header
		body string
		out  Outcome
		code ErrorCode
		bad  Reason
	}{
		{"register 201 created", V1, OpRegister, 201, nil, okBody(V1, OpRegister, OutcomeCreated), OutcomeCreated, "", ""},
		{"register 200 created accepted", V1, OpRegister, 200, nil, okBody(V1, OpRegister, OutcomeCreated), OutcomeCreated, "", ""},
		{"register 201 updated accepted", V2, OpRegister, 201, nil, okBody(V2, OpRegister, OutcomeUpdated), OutcomeUpdated, "", ""},
		{"register 200 unchanged", V3, OpRegister, 200, nil, okBody(V3, OpRegister, OutcomeUnchanged), OutcomeUnchanged, "", ""},
		{"heartbeat 200 recorded", V1, OpHeartbeat, 200, nil, okBody(V1, OpHeartbeat, OutcomeRecorded), OutcomeRecorded, "", ""},
		{"heartbeat 201 refused", V1, OpHeartbeat, 201, nil, okBody(V1, OpHeartbeat, OutcomeRecorded), "", "", ReasonStatusCode},
		{"unregister 201 refused", V1, OpUnregister, 201, nil, okBody(V1, OpUnregister, OutcomeRemoved), "", "", ReasonStatusCode},
		{"unregister absent", V1, OpUnregister, 200, nil, okBody(V1, OpUnregister, OutcomeAbsent), OutcomeAbsent, "", ""},
		{"202 refused", V1, OpRegister, 202, nil, okBody(V1, OpRegister, OutcomeCreated), "", "", ReasonStatusCode},
		{"204 refused", V1, OpHeartbeat, 204, nil, "", "", "", ReasonStatusCode},
		{"wrong outcome for op", V1, OpHeartbeat, 200, nil, okBody(V1, OpHeartbeat, OutcomeCreated), "", "", ReasonOutcome},
		{"unknown outcome", V1, OpRegister, 200, nil, okBody(V1, OpRegister, "ok"), "", "", ReasonOutcome},
		{"wrong version", V2, OpHeartbeat, 200, nil, okBody(V1, OpHeartbeat, OutcomeRecorded), "", "", ReasonVersion},
		{"wrong operation", V1, OpHeartbeat, 200, nil, okBody(V1, OpRegister, OutcomeRecorded), "", "", ReasonOperation},
		{"wrong actor", V1, OpHeartbeat, 200, nil, strings.Replace(big, "/actor", "/other", 1), "", "", ReasonActor},
		{"unknown name", V1, OpHeartbeat, 200, nil, strings.Replace(big, "}", `,"x":1}`, 1), "", "", ReasonUnknownField},
		{"missing name", V1, OpHeartbeat, 200, nil, `{"protocol_version":1,"operation":"heartbeat","outcome":"recorded"}`, "", "", ReasonUnknownField},
		{"duplicate name", V1, OpHeartbeat, 200, nil, strings.Replace(big, "}", `,"outcome":"recorded"}`, 1), "", "", ReasonDuplicate},
		{"case-variant name", V1, OpHeartbeat, 200, nil, strings.Replace(big, `"outcome"`, `"Outcome"`, 1), "", "", ReasonUnknownField},
		{"trailing value", V1, OpHeartbeat, 200, nil, big + "{}", "", "", ReasonTrailing},
		{"empty body", V1, OpHeartbeat, 200, nil, "", "", "", ReasonJSON},
		{"invalid JSON", V1, OpHeartbeat, 200, nil, "{", "", "", ReasonJSON},
		{"version as string", V1, OpHeartbeat, 200, nil, strings.Replace(big, `:1,`, `:"1",`, 1), "", "", ReasonJSON},
		{"version as float", V1, OpHeartbeat, 200, nil, strings.Replace(big, `:1,`, `:1.0,`, 1), "", "", ReasonJSON},
		{"content type with charset", V1, OpHeartbeat, 200, http.Header{"Content-Type": {"application/json; charset=utf-8"}}, big, "", "", ReasonContentType},
		{"content type missing", V1, OpHeartbeat, 200, http.Header{}, big, "", "", ReasonContentType},
		{"content type twice", V1, OpHeartbeat, 200, http.Header{"Content-Type": {"application/json", "application/json"}}, big, "", "", ReasonContentType},
		{"content type text/plain 404", V2, OpHeartbeat, 404, http.Header{"Content-Type": {"text/plain"}}, "404 page not found\n", "", "", ReasonStatusCode},
		{"gzip encoding", V1, OpHeartbeat, 200, http.Header{"Content-Type": {"application/json"}, "Content-Encoding": {"gzip"}}, big, "", "", ReasonEncoding},
		{"307 redirect", V1, OpRegister, 307, nil, "", "", "", ReasonRedirect},
		{"308 redirect", V1, OpRegister, 308, nil, "", "", "", ReasonRedirect},
		{"405", V1, OpRegister, 405, nil, errBody(V1, "invalid_request", "method not allowed"), "", "", ReasonStatusCode},
		{"409 relay_not_registered", V1, OpHeartbeat, 409, nil, errBody(V1, "relay_not_registered", "relay is not registered"), "", CodeRelayNotRegistered, ""},
		{"409 replay", V3, OpRegister, 409, nil, errBody(V3, "replay_detected", "replay"), "", CodeReplayDetected, ""},
		{"400 invalid_request", V1, OpHeartbeat, 400, nil, errBody(V1, "invalid_request", "relay is not registered"), "", CodeInvalidRequest, ""},
		{"413 invalid_request", V1, OpRegister, 413, nil, errBody(V1, "invalid_request", "too large"), "", CodeInvalidRequest, ""},
		{"400 unsupported version", V2, OpRegister, 400, nil, errBody(V2, "unsupported_protocol_version", "x"), "", CodeUnsupportedProtocolVersion, ""},
		{"401", V1, OpRegister, 401, nil, errBody(V1, "authentication_failed", "x"), "", CodeAuthenticationFailed, ""},
		{"403 suspended", V1, OpRegister, 403, nil, errBody(V1, "relay_suspended", "x"), "", CodeRelaySuspended, ""},
		{"403 enrollment", V1, OpRegister, 403, nil, errBody(V1, "enrollment_closed", "directory enrollment is closed"), "", CodeEnrollmentClosed, ""},
		{"429", V1, OpHeartbeat, 429, nil, errBody(V1, "rate_limited", "x"), "", CodeRateLimited, ""},
		{"500 internal", V1, OpHeartbeat, 500, nil, errBody(V1, "internal_error", "x"), "", CodeInternalError, ""},
		{"503 internal", V1, OpHeartbeat, 503, nil, errBody(V1, "internal_error", "x"), "", CodeInternalError, ""},
		{"503 lifecycle", V1, OpHeartbeat, 503, nil, errBody(V1, "lifecycle_unavailable", "x"), "", CodeLifecycleUnavailable, ""},
		{"retired registration_unavailable", V1, OpHeartbeat, 503, nil, errBody(V1, "registration_unavailable", "x"), "", "", ReasonErrorCode},
		{"unknown code", V1, OpHeartbeat, 400, nil, errBody(V1, "teapot", "x"), "", "", ReasonErrorCode},
		{"code with wrong status", V1, OpHeartbeat, 400, nil, errBody(V1, "relay_not_registered", "x"), "", "", ReasonCodeStatus},
		{"500 lifecycle_unavailable", V1, OpHeartbeat, 500, nil, errBody(V1, "lifecycle_unavailable", "x"), "", "", ReasonCodeStatus},
		{"empty message", V1, OpHeartbeat, 409, nil, errBody(V1, "relay_not_registered", ""), "", "", ReasonMessage},
		{"257-byte message", V1, OpHeartbeat, 409, nil, errBody(V1, "relay_not_registered", strings.Repeat("m", 257)), "", "", ReasonMessage},
		{"256-byte message", V1, OpHeartbeat, 409, nil, errBody(V1, "relay_not_registered", strings.Repeat("m", 256)), "", CodeRelayNotRegistered, ""},
		{"envelope wrong version", V2, OpHeartbeat, 409, nil, errBody(V1, "relay_not_registered", "x"), "", "", ReasonVersion},
		{"nested unknown name", V1, OpHeartbeat, 409, nil, `{"protocol_version":1,"error":{"code":"relay_not_registered","message":"x","detail":"y"}}`, "", "", ReasonUnknownField},
		{"nested duplicate", V1, OpHeartbeat, 409, nil, `{"protocol_version":1,"error":{"code":"relay_not_registered","code":"relay_not_registered","message":"x"}}`, "", "", ReasonDuplicate},
		{"error null", V1, OpHeartbeat, 409, nil, `{"protocol_version":1,"error":null}`, "", "", ReasonJSON},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.hdr
			if h == nil {
				h = jsonHdr
			}
			out, err := decodeLifecycle(tc.v, tc.op, tActor, tc.sc, h, []byte(tc.body), time.Now())
			var re *ResponseError
			var ie *InvalidResponseError
			switch {
			case tc.bad != "":
				if !errors.As(err, &ie) || ie.Reason != tc.bad {
					t.Fatalf("got %v, want invalid %q", err, tc.bad)
				}
				if !errors.Is(err, ErrInvalidResponse) || ClassOf(err) != ClassPermanent {
					t.Fatalf("invalid response not permanent: %v", err)
				}
			case tc.code != "":
				if !errors.As(err, &re) || re.Code != tc.code || re.StatusCode != tc.sc {
					t.Fatalf("got %v, want %s", err, tc.code)
				}
				// The remote message never survives into the error.
				if strings.Contains(err.Error(), "not registered") && tc.code != CodeRelayNotRegistered ||
					strings.Contains(err.Error(), "mmmm") || strings.Contains(err.Error(), "enrollment is closed") {
					t.Fatalf("remote message leaked: %v", err)
				}
			default:
				if err != nil || out != tc.out {
					t.Fatalf("got %q, %v; want %q", out, err, tc.out)
				}
			}
		})
	}
}

func TestOversizeLimitIsExact(t *testing.T) {
	t.Parallel()
	if MaxResponseBytes != 16384 {
		t.Fatalf("cap %d", MaxResponseBytes)
	}
}

// TestRetryAfter covers spec section 5.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 8, 5, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		lines []string
		want  time.Duration
		ok    bool
	}{
		{"missing", nil, 0, true},
		{"zero", []string{"0"}, 0, true},
		{"delta 7", []string{"7"}, 7 * time.Second, true},
		{"delta 7200", []string{"7200"}, 2 * time.Hour, true},
		{"delta 25h capped", []string{"90000"}, 24 * time.Hour, true},
		{"delta huge capped", []string{"99999999999999999999"}, 24 * time.Hour, true},
		{"http date", []string{now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second, true},
		{"http date 25h capped", []string{now.Add(25 * time.Hour).Format(http.TimeFormat)}, 24 * time.Hour, true},
		{"past date", []string{now.Add(-time.Hour).Format(http.TimeFormat)}, 0, false},
		{"garbage later", []string{"later"}, 0, false},
		{"garbage tomorrow", []string{"tomorrow"}, 0, false},
		{"negative", []string{"-5"}, 0, false},
		{"fraction", []string{"1.5"}, 0, false},
		{"empty", []string{""}, 0, false},
		{"two lines", []string{"1", "2"}, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseRetryAfter(tc.lines, now)
			if ok != tc.ok || got != tc.want {
				t.Fatalf("got %v %v, want %v %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestRetryAfterHonouredOnlyFor429And503Internal: Retry-After counts only
// with 429 rate_limited and 503 internal_error; elsewhere it is ignored,
// even when malformed.
func TestRetryAfterHonouredOnlyFor429And503Internal(t *testing.T) {
	t.Parallel()
	now := time.Now()
	cases := []struct {
		name string
		sc   int
		code string
		ra   string
		want time.Duration
		bad  bool
	}{
		{"429 honoured", 429, "rate_limited", "53", 53 * time.Second, false},
		{"503 internal honoured", 503, "internal_error", "7", 7 * time.Second, false},
		{"503 lifecycle ignored", 503, "lifecycle_unavailable", "7", 0, false},
		{"500 internal ignored", 500, "internal_error", "7", 0, false},
		{"409 ignored", 409, "relay_not_registered", "7", 0, false},
		{"429 25h capped", 429, "rate_limited", "90000", 24 * time.Hour, false},
		{"503 past date invalid", 503, "internal_error", now.Add(-time.Hour).UTC().Format(http.TimeFormat), 0, true},
		{"429 garbage invalid", 429, "rate_limited", "soon", 0, true},
		{"503 lifecycle garbage ignored", 503, "lifecycle_unavailable", "soon", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{"Content-Type": {"application/json"}, "Retry-After": {tc.ra}}
			_, err := decodeLifecycle(V1, OpHeartbeat, tActor, tc.sc, h, []byte(errBody(V1, tc.code, "x")), now)
			if tc.bad {
				if !errors.Is(err, ErrInvalidResponse) {
					t.Fatalf("got %v, want invalid", err)
				}
				return
			}
			var re *ResponseError
			if !errors.As(err, &re) || re.RetryAfter != tc.want || RetryAfterOf(err) != tc.want {
				t.Fatalf("got %v, want RetryAfter %v", err, tc.want)
			}
			if tc.want > 0 && !re.RetryAt.Equal(now.Add(tc.want)) {
				t.Fatalf("RetryAt %v", re.RetryAt)
			}
		})
	}
}

func TestClassOf(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		err  error
		want Class
	}{
		{"nil", nil, ClassNone},
		{"transport", &TransportError{}, ClassRetryable},
		{"timeout", &TransportError{Timeout: true}, ClassRetryable},
		{"canceled", &TransportError{Canceled: true}, ClassPermanent},
		{"429", &ResponseError{Operation: OpHeartbeat, StatusCode: 429, Code: CodeRateLimited}, ClassRetryable},
		{"500", &ResponseError{Operation: OpHeartbeat, StatusCode: 500, Code: CodeInternalError}, ClassRetryable},
		{"503 internal", &ResponseError{Operation: OpHeartbeat, StatusCode: 503, Code: CodeInternalError}, ClassRetryable},
		{"heartbeat 409", &ResponseError{Operation: OpHeartbeat, StatusCode: 409, Code: CodeRelayNotRegistered}, ClassReconcile},
		{"register 409 not registered", &ResponseError{Operation: OpRegister, StatusCode: 409, Code: CodeRelayNotRegistered}, ClassPermanent},
		{"replay", &ResponseError{Operation: OpHeartbeat, StatusCode: 409, Code: CodeReplayDetected}, ClassPermanent},
		{"invalid_request", &ResponseError{Operation: OpHeartbeat, StatusCode: 400, Code: CodeInvalidRequest}, ClassPermanent},
		{"unsupported", &ResponseError{StatusCode: 400, Code: CodeUnsupportedProtocolVersion}, ClassPermanent},
		{"auth", &ResponseError{StatusCode: 401, Code: CodeAuthenticationFailed}, ClassPermanent},
		{"enrollment", &ResponseError{StatusCode: 403, Code: CodeEnrollmentClosed}, ClassPermanent},
		{"suspended", &ResponseError{StatusCode: 403, Code: CodeRelaySuspended}, ClassPermanent},
		{"lifecycle", &ResponseError{StatusCode: 503, Code: CodeLifecycleUnavailable}, ClassPermanent},
		{"invalid response", &InvalidResponseError{StatusCode: 200, Reason: ReasonJSON}, ClassPermanent},
		{"disabled", ErrDisabled, ClassPermanent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClassOf(tc.err); got != tc.want {
				t.Fatalf("ClassOf = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStateVocabulary(t *testing.T) {
	t.Parallel()
	want := []string{"configured", "registered", "heartbeat-current", "retrying", "disabled", "unregister-pending"}
	got := States()
	if len(got) != len(want) {
		t.Fatalf("%d states", len(got))
	}
	for i, s := range got {
		if string(s) != want[i] {
			t.Errorf("state %d = %q, want %q", i, s, want[i])
		}
		b, err := s.MarshalText()
		if err != nil || string(b) != want[i] {
			t.Errorf("MarshalText(%q) = %q, %v", s, b, err)
		}
		var back State
		if err := back.UnmarshalText(b); err != nil || back != s {
			t.Errorf("round trip %q: %v", s, err)
		}
	}
	if _, err := ParseState("Registered"); !errors.Is(err, ErrInvalidState) {
		t.Errorf("case-variant state accepted")
	}
	if _, err := State("bogus").MarshalText(); err == nil {
		t.Errorf("bogus state marshalled")
	}
}
