package directory_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/directorytest"
	"github.com/fedkit/fedkit/sig"
)

type bundle struct {
	d   *directorytest.Server
	c   *directory.Client
	cfg *directory.Config
}

// setup builds a fake Directory that knows the test key, and a client
// reaching it in-process. mut adjusts the client config before New.
func setup(t testing.TB, dcfg *directorytest.Config, mut func(*directory.Config)) *bundle {
	t.Helper()
	key := testKey(t)
	if dcfg == nil {
		dcfg = &directorytest.Config{EnrollmentOpen: true}
	}
	d := directorytest.New(dcfg)
	d.AddKey(keyID, key.Public())
	cfg := &directory.Config{
		Actor: actor, PublicBaseURL: base, Directories: enabled(d.Origin()), HTTP: d.Doer(),
		Profile: fixtureProfile,
	}
	if mut != nil {
		mut(cfg)
	}
	c, err := directory.New(key, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{d: d, c: c, cfg: cfg}
}

func ops(reqs []directorytest.Request) string {
	var s []string
	for _, r := range reqs {
		s = append(s, string(r.Operation))
	}
	return strings.Join(s, ",")
}

func telemetry(n int64, err error) directory.TelemetryFunc {
	return func(context.Context) (int64, error) { return n, err }
}

// TestLifecycle runs register, heartbeat and unregister against the fake
// Directory at every version and checks outcomes and server state.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, v := range []directory.Version{directory.V1, directory.V2, directory.V3} {
		t.Run(v.String(), func(t *testing.T) {
			b := setup(t, nil, func(c *directory.Config) { c.Telemetry = telemetry(7, nil) })
			o := b.d.Origin()
			opts := &directory.CallOpts{Version: v}
			steps := []struct {
				call func(context.Context, string, *directory.CallOpts) (*directory.Result, error)
				out  directory.Outcome
				sc   int
			}{
				{b.c.Register, directory.OutcomeCreated, 201},
				{b.c.Register, directory.OutcomeUnchanged, 200},
				{b.c.Heartbeat, directory.OutcomeRecorded, 200},
				{b.c.Unregister, directory.OutcomeRemoved, 200},
				{b.c.Unregister, directory.OutcomeAbsent, 200},
			}
			for i, st := range steps {
				res, err := st.call(ctx, o, opts)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if res.Outcome != st.out || res.StatusCode != st.sc || res.Version != v || res.Requests != 1 {
					t.Fatalf("step %d: %+v", i, res)
				}
				if i == 0 {
					reg, _ := b.d.Registration(actor)
					if (v >= directory.V2) != (reg.Profile != nil) {
						t.Fatalf("profile stored %v at %v", reg.Profile, v)
					}
					if v == directory.V3 && reg.Telemetry != 7 || v != directory.V3 && reg.Telemetry != -1 {
						t.Fatalf("telemetry %d at %v", reg.Telemetry, v)
					}
					if v >= directory.V2 && res.ProfileDigest != fixtureProfile.Digest() {
						t.Fatalf("digest %q", res.ProfileDigest)
					}
				}
			}
			// The observed sequence of spec section 9: heartbeat after
			// unregister is 409, and reconciliation restores the row.
			res, err := b.c.Heartbeat(ctx, o, opts)
			if err != nil || !res.Reconciled || res.RegisterOutcome != directory.OutcomeUpdated || res.Outcome != directory.OutcomeRecorded {
				t.Fatalf("reconcile: %+v %v", res, err)
			}
			if got := ops(b.d.Requests()); got != "register,register,heartbeat,unregister,unregister,heartbeat,register,heartbeat" {
				t.Fatalf("requests %s", got)
			}
		})
	}
}

// TestRequestProfile checks every request header rule of spec section 8
// on every version and operation.
func TestRequestProfile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	key := testKey(t)
	created := time.Date(2026, 10, 3, 22, 30, 0, 0, time.UTC)
	for _, v := range []directory.Version{directory.V1, directory.V2, directory.V3} {
		for _, op := range []directory.Operation{directory.OpRegister, directory.OpHeartbeat, directory.OpUnregister} {
			t.Run(v.String()+"/"+string(op), func(t *testing.T) {
				cap := &capture{}
				c, err := directory.New(key, &directory.Config{Actor: actor, PublicBaseURL: base, Directories: enabled(dirO),
					HTTP: cap, Profile: fixtureProfile, Telemetry: telemetry(3, nil),
					Now: fixedClock(created.Add(400 * time.Millisecond))})
				if err != nil {
					t.Fatal(err)
				}
				call := map[directory.Operation]func(context.Context, string, *directory.CallOpts) (*directory.Result, error){
					directory.OpRegister: c.Register, directory.OpHeartbeat: c.Heartbeat, directory.OpUnregister: c.Unregister}[op]
				if _, err := call(ctx, dirO, &directory.CallOpts{Version: v}); err != nil {
					t.Fatal(err)
				}
				r, body := cap.reqs[0], cap.body[0]
				if r.Method != http.MethodPost || r.URL.Scheme != "https" || r.URL.Host != "directory.example" ||
					r.URL.Path != "/"+v.String()+"/relays/"+string(op) || r.URL.RawQuery != "" || r.URL.ForceQuery {
					t.Fatalf("target %s %s", r.Method, r.URL)
				}
				h := r.Header
				for _, name := range []string{"Content-Type", "Content-Digest", "Date", "Signature-Input", "Signature"} {
					if len(h.Values(name)) != 1 {
						t.Fatalf("%s has %d lines", name, len(h.Values(name)))
					}
				}
				if h.Get("Content-Type") != "application/json" || h.Get("Digest") != "" {
					t.Fatalf("content type %q, digest %q", h.Get("Content-Type"), h.Get("Digest"))
				}
				if h.Get("Date") != "Sat, 03 Oct 2026 22:30:00 GMT" {
					t.Fatalf("Date %q is not the whole-second created", h.Get("Date"))
				}
				if h.Get("Content-Digest") != sig.ContentDigest(body) {
					t.Fatalf("digest does not cover the exact bytes")
				}
				in := h.Get("Signature-Input")
				wantParams := `directory=("@method" "@authority" "@target-uri" "content-digest" "content-type" "date");keyid="https://relay.example/actor#main-key";alg="rsa-v1_5-sha256";tag="` + v.Tag() + `";nonce="`
				if !strings.HasPrefix(in, wantParams) || !strings.HasSuffix(in, `";created=1791066600;expires=1791066900`) {
					t.Fatalf("Signature-Input %s", in)
				}
				nonce := strings.TrimSuffix(strings.TrimPrefix(in, wantParams), `";created=1791066600;expires=1791066900`)
				if len(nonce) != 32 || strings.ContainsAny(nonce, "+/=") {
					t.Fatalf("nonce %q is not 24 random bytes in base64url", nonce)
				}
				if !strings.HasPrefix(h.Get("Signature"), "directory=:") {
					t.Fatalf("Signature %s", h.Get("Signature"))
				}
				if err := directorytest.VerifyBase(r.Method, r.URL.Host, r.URL.Path, h.Get("Content-Digest"), h.Get("Content-Type"),
					h.Get("Date"), in, h.Get("Signature"), key.Public()); err != nil {
					t.Fatalf("signature: %v", err)
				}
				var m map[string]json.RawMessage
				json.Unmarshal(body, &m)
				_, hasBase := m["public_base_url"]
				_, hasProfile := m["profile"]
				_, hasTelemetry := m["telemetry"]
				if hasBase != (op == directory.OpRegister) || hasProfile != (op == directory.OpRegister && v >= directory.V2) {
					t.Fatalf("body %s", body)
				}
				if hasTelemetry != (v == directory.V3 && op != directory.OpUnregister) {
					t.Fatalf("telemetry in %s", body)
				}
			})
		}
	}
}

// TestTelemetry: v3 carries 0..10,000,000 and omits failures and
// out-of-range values; v2 never carries telemetry.
func TestTelemetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name string
		v    directory.Version
		f    directory.TelemetryFunc
		want string // "" = omitted
	}{
		{"zero is sent as zero", directory.V3, telemetry(0, nil), `"telemetry":{"participating_instance_count":0}`},
		{"maximum", directory.V3, telemetry(10_000_000, nil), `"telemetry":{"participating_instance_count":10000000}`},
		{"above maximum omitted", directory.V3, telemetry(10_000_001, nil), ""},
		{"negative omitted", directory.V3, telemetry(-1, nil), ""},
		{"provider error omitted", directory.V3, telemetry(5, errors.New("down")), ""},
		{"no provider omitted", directory.V3, nil, ""},
		{"v2 never", directory.V2, telemetry(5, nil), ""},
		{"v1 never", directory.V1, telemetry(5, nil), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cap := &capture{}
			c, err := directory.New(testKey(t), &directory.Config{Actor: actor, PublicBaseURL: base,
				Directories: enabled(dirO), HTTP: cap, Telemetry: tc.f})
			if err != nil {
				t.Fatal(err)
			}
			opts := &directory.CallOpts{Version: tc.v}
			for _, call := range []func(context.Context, string, *directory.CallOpts) (*directory.Result, error){c.Register, c.Heartbeat, c.Unregister} {
				if _, err := call(ctx, dirO, opts); err != nil {
					t.Fatal(err)
				}
			}
			if len(cap.body) != 3 {
				t.Fatalf("%d requests, want 3", len(cap.body))
			}
			for i, b := range cap.body {
				has := strings.Contains(string(b), "telemetry")
				if i == 2 && has {
					t.Fatalf("telemetry on unregister: %s", b)
				}
				if i < 2 && (tc.want == "" && has || tc.want != "" && !strings.Contains(string(b), tc.want)) {
					t.Fatalf("body %s, want %q", b, tc.want)
				}
			}
		})
	}
}

// TestReconciliationIsClosed: heartbeat → 409 → register → heartbeat, three
// distinct nonces, and never a loop.
func TestReconciliationIsClosed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("three requests three nonces", func(t *testing.T) {
		b := setup(t, nil, nil)
		b.c.Register(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V2})
		b.d.Forget(actor)
		res, err := b.c.Heartbeat(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V2})
		if err != nil || !res.Reconciled || res.Requests != 3 {
			t.Fatalf("%+v %v", res, err)
		}
		reqs := b.d.Requests()[1:]
		if ops(reqs) != "heartbeat,register,heartbeat" {
			t.Fatalf("sequence %s", ops(reqs))
		}
		seen := map[string]bool{}
		for _, r := range reqs {
			if r.Nonce == "" || seen[r.Nonce] {
				t.Fatalf("nonce reused or missing: %q", r.Nonce)
			}
			seen[r.Nonce] = true
		}
	})
	t.Run("final heartbeat failure stops", func(t *testing.T) {
		b := setup(t, nil, nil)
		b.d.Enqueue(directorytest.Reply{StatusCode: 409, Code: directory.CodeRelayNotRegistered}, directorytest.Reply{},
			directorytest.Reply{StatusCode: 409, Code: directory.CodeRelayNotRegistered})
		res, err := b.c.Heartbeat(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V1})
		var re *directory.ResponseError
		if !errors.As(err, &re) || re.Code != directory.CodeRelayNotRegistered || !res.Reconciled {
			t.Fatalf("%+v %v", res, err)
		}
		if got := ops(b.d.Requests()); got != "heartbeat,register,heartbeat" {
			t.Fatalf("sequence %s", got)
		}
	})
	// Exactly one register and one final heartbeat, even for failures that
	// are retryable elsewhere and with the default three attempts.
	for _, tc := range []struct {
		name    string
		replies []directorytest.Reply
		want    string
	}{
		{"retryable register failure is not retried", []directorytest.Reply{
			{StatusCode: 409, Code: directory.CodeRelayNotRegistered},
			{StatusCode: 503, Code: directory.CodeInternalError}, {StatusCode: 503, Code: directory.CodeInternalError},
		}, "heartbeat,register"},
		{"retryable final heartbeat failure is not retried", []directorytest.Reply{
			{StatusCode: 409, Code: directory.CodeRelayNotRegistered}, {},
			{StatusCode: 500, Code: directory.CodeInternalError}, {StatusCode: 500, Code: directory.CodeInternalError},
		}, "heartbeat,register,heartbeat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := setup(t, nil, nil)
				b.d.Enqueue(tc.replies...)
				res, err := b.c.Heartbeat(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V1})
				if directory.ClassOf(err) != directory.ClassRetryable || !res.Reconciled {
					t.Fatalf("%+v %v", res, err)
				}
				if got := ops(b.d.Requests()); got != tc.want {
					t.Fatalf("sequence %s, want %s", got, tc.want)
				}
			})
		})
	}
	t.Run("register failure stops", func(t *testing.T) {
		b := setup(t, &directorytest.Config{EnrollmentOpen: false}, nil)
		_, err := b.c.Heartbeat(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V1})
		var re *directory.ResponseError
		if !errors.As(err, &re) || re.Code != directory.CodeEnrollmentClosed {
			t.Fatalf("%v", err)
		}
		if got := ops(b.d.Requests()); got != "heartbeat,register" {
			t.Fatalf("sequence %s", got)
		}
	})
}

// TestHeartbeatErrorsNeverRegister: every other heartbeat failure makes
// no register request (retryable ones are retried as heartbeats only).
func TestHeartbeatErrorsNeverRegister(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name  string
		reply directorytest.Reply
	}{
		{"400 invalid_request", directorytest.Reply{StatusCode: 400, Code: directory.CodeInvalidRequest}},
		{"400 unsupported version", directorytest.Reply{StatusCode: 400, Code: directory.CodeUnsupportedProtocolVersion}},
		{"401", directorytest.Reply{StatusCode: 401, Code: directory.CodeAuthenticationFailed}},
		{"403 suspended", directorytest.Reply{StatusCode: 403, Code: directory.CodeRelaySuspended}},
		{"403 enrollment", directorytest.Reply{StatusCode: 403, Code: directory.CodeEnrollmentClosed}},
		{"409 replay", directorytest.Reply{StatusCode: 409, Code: directory.CodeReplayDetected}},
		{"429", directorytest.Reply{StatusCode: 429, Code: directory.CodeRateLimited}},
		{"500", directorytest.Reply{StatusCode: 500, Code: directory.CodeInternalError}},
		{"503 lifecycle", directorytest.Reply{StatusCode: 503, Code: directory.CodeLifecycleUnavailable}},
		{"409 with wrong pairing is invalid", directorytest.Reply{StatusCode: 400, Code: directory.CodeRelayNotRegistered}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, nil, nil)
			b.c.Register(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V1})
			b.d.Enqueue(tc.reply, tc.reply, tc.reply)
			_, err := b.c.Heartbeat(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V1, MaxRetryWait: -1, MaxAttempts: 1})
			if err == nil {
				t.Fatal("no error")
			}
			if got := ops(b.d.Requests()); got != "register,heartbeat" {
				t.Fatalf("sequence %s", got)
			}
		})
	}
}

// TestServerEnforcement exercises the fake Directory's server-side checks
// through the client: enrollment, suspension, rate limit, tag per version.
func TestServerEnforcement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	code := func(err error) directory.ErrorCode {
		var re *directory.ResponseError
		if errors.As(err, &re) {
			return re.Code
		}
		return ""
	}
	t.Run("enrollment closed blocks first register only", func(t *testing.T) {
		b := setup(t, &directorytest.Config{}, nil)
		_, err := b.c.Register(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V1})
		if code(err) != directory.CodeEnrollmentClosed {
			t.Fatal(err)
		}
		b.d.SetEnrollment(true)
		b.c.Register(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V1})
		b.d.SetEnrollment(false)
		if _, err := b.c.Heartbeat(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V1}); err != nil {
			t.Fatal(err)
		}
		if res, err := b.c.Register(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V2}); err != nil || res.Outcome != directory.OutcomeUpdated {
			t.Fatal(res, err)
		}
	})
	t.Run("suspension", func(t *testing.T) {
		b := setup(t, nil, nil)
		b.c.Register(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V1})
		b.d.Suspend(actor, true)
		if _, err := b.c.Heartbeat(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V1}); code(err) != directory.CodeRelaySuspended {
			t.Fatal(err)
		}
		if res, err := b.c.Unregister(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V1}); err != nil || res.Outcome != directory.OutcomeRemoved {
			t.Fatal(res, err)
		}
	})
	t.Run("rate limit 11th heartbeat", func(t *testing.T) {
		b := setup(t, nil, nil)
		b.c.Register(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V1})
		var err error
		for i := 0; i < 11 && err == nil; i++ {
			_, err = b.c.Heartbeat(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V1, MaxRetryWait: -1})
		}
		if code(err) != directory.CodeRateLimited || directory.RetryAfterOf(err) <= 0 || directory.RetryAfterOf(err) > time.Minute {
			t.Fatalf("%v", err)
		}
		if directory.ClassOf(err) != directory.ClassRetryable {
			t.Fatal("429 not retryable")
		}
	})
	t.Run("wrong key is authentication_failed", func(t *testing.T) {
		other, _ := rsa.GenerateKey(rand.Reader, 2048)
		b := setup(t, nil, nil)
		b.d.AddKey(keyID, other.Public())
		_, err := b.c.Register(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V1})
		if code(err) != directory.CodeAuthenticationFailed || directory.ClassOf(err) != directory.ClassPermanent {
			t.Fatal(err)
		}
	})
	t.Run("clock skew is authentication_failed", func(t *testing.T) {
		b := setup(t, nil, func(c *directory.Config) { c.Now = func() time.Time { return time.Now().Add(-6 * time.Minute) } })
		if _, err := b.c.Register(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V1}); code(err) != directory.CodeAuthenticationFailed {
			t.Fatal(err)
		}
	})
	t.Run("replayed nonce is replay_detected", func(t *testing.T) {
		b := setup(t, nil, func(c *directory.Config) { c.Nonce = fixedNonce("same-nonce") })
		b.c.Register(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V1})
		_, err := b.c.Heartbeat(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V1})
		if code(err) != directory.CodeReplayDetected {
			t.Fatal(err)
		}
	})
	t.Run("lifecycle unavailable", func(t *testing.T) {
		b := setup(t, nil, nil)
		b.d.SetLifecycleAvailable(false)
		if _, err := b.c.Register(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V1}); code(err) != directory.CodeLifecycleUnavailable {
			t.Fatal(err)
		}
	})
	t.Run("unrouted version is 404 text/plain, invalid", func(t *testing.T) {
		b := setup(t, &directorytest.Config{Schema: 3, EnrollmentOpen: true}, nil)
		_, err := b.c.Register(ctx, b.d.Origin(), &directory.CallOpts{Version: directory.V2})
		var ie *directory.InvalidResponseError
		if !errors.As(err, &ie) || ie.StatusCode != 404 {
			t.Fatal(err)
		}
	})
}

// TestNegotiation: the table of spec section 7 through the status
// document, and no lifecycle request after a status failure.
func TestNegotiation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name     string
		schema   int
		versions []directory.Version
		want     directory.Version
	}{
		{"schema 2", 2, nil, directory.V1},
		{"schema 3", 3, nil, directory.V1},
		{"schema 4 [1]", 4, []directory.Version{1}, directory.V1},
		{"schema 4 [1,2]", 4, []directory.Version{1, 2}, directory.V2},
		{"schema 4 [1,2,3]", 4, []directory.Version{1, 2, 3}, directory.V3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, &directorytest.Config{Schema: tc.schema, Versions: tc.versions, EnrollmentOpen: true}, nil)
			res, err := b.c.Register(ctx, b.d.Origin(), nil)
			if err != nil || res.Version != tc.want {
				t.Fatalf("%+v %v", res, err)
			}
			if b.d.StatusReads() != 1 {
				t.Fatalf("%d status reads", b.d.StatusReads())
			}
		})
	}
	t.Run("status failure sends no lifecycle request", func(t *testing.T) {
		b := setup(t, nil, nil)
		b.d.SetStatusFailing(true)
		for _, call := range []func(context.Context, string, *directory.CallOpts) (*directory.Result, error){b.c.Register, b.c.Heartbeat, b.c.Unregister, b.c.Sync} {
			_, err := call(ctx, b.d.Origin(), nil)
			var re *directory.ResponseError
			if !errors.As(err, &re) || re.Code != directory.CodeInternalError || re.StatusCode != 503 {
				t.Fatal(err)
			}
		}
		if n := len(b.d.Requests()); n != 0 {
			t.Fatalf("%d lifecycle requests after status failure", n)
		}
	})
	t.Run("higher version later: sync registers under it", func(t *testing.T) {
		b := setup(t, &directorytest.Config{Schema: 4, Versions: []directory.Version{1}, EnrollmentOpen: true}, nil)
		if res, _ := b.c.Sync(ctx, b.d.Origin(), nil); res.Version != directory.V1 {
			t.Fatal(res)
		}
		b.d.SetVersions(1, 2, 3)
		res, err := b.c.Sync(ctx, b.d.Origin(), nil)
		if err != nil || res.Version != directory.V3 || res.Outcome != directory.OutcomeUpdated || res.ProfileDigest == "" {
			t.Fatal(res, err)
		}
		if _, err := b.c.Sync(ctx, b.d.Origin(), &directory.CallOpts{Version: 4}); !errors.Is(err, directory.ErrUnsupportedVersion) {
			t.Fatal(err)
		}
	})
}

// TestStatusIsUnsignedGET: no Signature, Signature-Input or Content-Digest.
func TestStatusIsUnsignedGET(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	var seen *http.Request
	inner := b.d.Doer()
	c, err := directory.New(testKey(t), &directory.Config{Actor: actor, PublicBaseURL: base,
		HTTP: doerFunc(func(r *http.Request) (*http.Response, error) { seen = r; return inner.Do(r) })})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Status(context.Background(), b.d.Origin())
	if err != nil || st.SchemaVersion != 4 || st.Negotiate() != directory.V3 {
		t.Fatal(st, err)
	}
	if seen.Method != http.MethodGet || seen.URL.Path != "/v1/status" || seen.Header.Get("Signature") != "" ||
		seen.Header.Get("Signature-Input") != "" || seen.Header.Get("Content-Digest") != "" || seen.Body != nil && seen.ContentLength > 0 {
		t.Fatalf("status request %s %s %v", seen.Method, seen.URL, seen.Header)
	}
}

// TestEntries: opt-in entries, at most 8, disabled ones send nothing
// except unregister.
func TestEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, nil, func(c *directory.Config) {
		c.Directories = []directory.Entry{{Origin: directorytest.OriginDefault}}
	})
	o := b.d.Origin()
	for name, call := range map[string]func(context.Context, string, *directory.CallOpts) (*directory.Result, error){
		"register": b.c.Register, "heartbeat": b.c.Heartbeat, "sync": b.c.Sync} {
		if _, err := call(ctx, o, nil); !errors.Is(err, directory.ErrDisabled) {
			t.Errorf("%s on disabled entry: %v", name, err)
		}
	}
	if _, err := b.c.Register(ctx, "https://other.example", nil); !errors.Is(err, directory.ErrUnknownDirectory) {
		t.Errorf("unknown origin: %v", err)
	}
	if b.d.StatusReads() != 0 || len(b.d.Requests()) != 0 {
		t.Fatalf("disabled entry produced traffic")
	}
	if res, err := b.c.Unregister(ctx, o, &directory.CallOpts{Version: directory.V1}); err != nil || res.Outcome != directory.OutcomeAbsent {
		t.Fatalf("unregister of disabled entry: %v %v", res, err)
	}
	var nine []directory.Entry
	for i := 0; i < 9; i++ {
		nine = append(nine, directory.Entry{Origin: "https://d" + string(rune('a'+i)) + ".example", Enabled: true})
	}
	if err := b.c.SetDirectories(nine); !errors.Is(err, directory.ErrConfig) {
		t.Fatalf("nine entries: %v", err)
	}
	if err := b.c.SetDirectories(nine[:8]); err != nil {
		t.Fatal(err)
	}
	if err := b.c.SetDirectories([]directory.Entry{{Origin: "https://d.example/"}}); !errors.Is(err, directory.ErrConfig) {
		t.Fatalf("non-canonical entry: %v", err)
	}
}

// TestNewRejects: construction refuses non-canonical identities, weak or
// non-RSA keys and bad key IDs.
func TestNewRejects(t *testing.T) {
	t.Parallel()
	weak, _ := rsa.GenerateKey(rand.Reader, 1024)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	cases := []struct {
		name string
		key  crypto.Signer
		cfg  directory.Config
	}{
		{"rsa 1024", weak, directory.Config{Actor: actor, PublicBaseURL: base}},
		{"ed25519", ed, directory.Config{Actor: actor, PublicBaseURL: base}},
		{"nil key", nil, directory.Config{Actor: actor, PublicBaseURL: base}},
		{"base trailing slash", testKey(t), directory.Config{Actor: actor, PublicBaseURL: base + "/"}},
		{"actor other origin", testKey(t), directory.Config{Actor: "https://other.example/actor", PublicBaseURL: base}},
		{"actor dot segment", testKey(t), directory.Config{Actor: base + "/a/../actor", PublicBaseURL: base}},
		{"actor upper host", testKey(t), directory.Config{Actor: "https://Relay.example/actor", PublicBaseURL: "https://Relay.example"}},
		{"padded keyid", testKey(t), directory.Config{Actor: actor, PublicBaseURL: base, KeyID: " " + keyID}},
		{"keyid other actor", testKey(t), directory.Config{Actor: actor, PublicBaseURL: base, KeyID: base + "/other#main-key"}},
		{"invalid profile", testKey(t), directory.Config{Actor: actor, PublicBaseURL: base, Profile: directory.Profile{ParticipationMode: "x"}}},
		{"nine directories", testKey(t), directory.Config{Actor: actor, PublicBaseURL: base, Directories: make([]directory.Entry, 9)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := directory.New(tc.key, &tc.cfg); !errors.Is(err, directory.ErrConfig) {
				t.Fatalf("got %v, want ErrConfig", err)
			}
		})
	}
	if _, err := directory.New(testKey(t), nil); !errors.Is(err, directory.ErrConfig) {
		t.Fatal("nil config accepted without an identity")
	}
}
