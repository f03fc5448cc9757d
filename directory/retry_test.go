package directory_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/directorytest"
)

// flaky wraps a Doer, failing the first n calls with a transport error and
// recording each request's Signature header.
type flaky struct {
	mu    sync.Mutex
	inner directory.Doer
	fail  int
	sigs  []string
	calls int
}

func (f *flaky) Do(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	f.calls++
	f.sigs = append(f.sigs, r.Header.Get("Signature-Input"))
	fail := f.calls <= f.fail
	f.mu.Unlock()
	if fail {
		return nil, errors.New("dial tcp 10.9.8.7:443: connection refused by secret-host.internal")
	}
	return f.inner.Do(r)
}

// TestRetries covers spec section 10.2 with a fake clock: transport and
// internal_error get at most three attempts with bounded backoff, every
// attempt freshly signed; Retry-After is waited out up to 30 s only.
func TestRetries(t *testing.T) {
	v1 := &directory.CallOpts{Version: directory.V1}
	t.Run("transport failure three attempts fresh signatures", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := setup(t, nil, nil)
			f := &flaky{inner: b.d.Doer(), fail: 5}
			c, _ := directory.New(testKey(t), withHTTP(b.cfg, f))
			start := time.Now()
			res, err := c.Register(context.Background(), b.d.Origin(), v1)
			var te *directory.TransportError
			if !errors.As(err, &te) || directory.ClassOf(err) != directory.ClassRetryable || f.calls != 3 || res.Requests != 3 {
				t.Fatalf("%v after %d calls", err, f.calls)
			}
			if el := time.Since(start); el != 750*time.Millisecond {
				t.Fatalf("backoff total %v, want 250ms+500ms", el)
			}
			if f.sigs[0] == f.sigs[1] || f.sigs[1] == f.sigs[2] || f.sigs[0] == f.sigs[2] {
				t.Fatal("a retry replayed a signature")
			}
			// No inner transport text survives.
			if msg := err.Error(); contains(msg, "10.9.8.7", "secret-host", "refused") {
				t.Fatalf("inner text leaked: %s", msg)
			}
		})
	})
	t.Run("transport failure then success", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := setup(t, nil, nil)
			f := &flaky{inner: b.d.Doer(), fail: 2}
			c, _ := directory.New(testKey(t), withHTTP(b.cfg, f))
			res, err := c.Register(context.Background(), b.d.Origin(), v1)
			if err != nil || res.Requests != 3 || res.Outcome != directory.OutcomeCreated {
				t.Fatal(res, err)
			}
		})
	})
	t.Run("internal_error retried", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := setup(t, nil, nil)
			b.d.Enqueue(directorytest.Reply{StatusCode: 500, Code: directory.CodeInternalError},
				directorytest.Reply{StatusCode: 503, Code: directory.CodeInternalError})
			res, err := b.c.Register(context.Background(), b.d.Origin(), v1)
			if err != nil || res.Requests != 3 {
				t.Fatal(res, err)
			}
		})
	})
	t.Run("single attempt option", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := setup(t, nil, nil)
			b.d.Enqueue(directorytest.Reply{StatusCode: 500, Code: directory.CodeInternalError})
			res, err := b.c.Register(context.Background(), b.d.Origin(), &directory.CallOpts{Version: directory.V1, MaxAttempts: 1})
			if err == nil || res.Requests != 1 {
				t.Fatal(res, err)
			}
		})
	})
	t.Run("429 Retry-After 25 s is waited out", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := setup(t, nil, nil)
			b.d.Enqueue(directorytest.Reply{StatusCode: 429, Code: directory.CodeRateLimited, RetryAfter: "25"})
			start := time.Now()
			res, err := b.c.Register(context.Background(), b.d.Origin(), v1)
			if err != nil || res.Requests != 2 || time.Since(start) != 25*time.Second {
				t.Fatal(res, err, time.Since(start))
			}
		})
	})
	t.Run("429 Retry-After 31 s returns with when to retry", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := setup(t, nil, nil)
			b.d.Enqueue(directorytest.Reply{StatusCode: 429, Code: directory.CodeRateLimited, RetryAfter: "31"})
			start := time.Now()
			res, err := b.c.Register(context.Background(), b.d.Origin(), v1)
			var re *directory.ResponseError
			if !errors.As(err, &re) || re.RetryAfter != 31*time.Second || !re.RetryAt.Equal(start.Add(31*time.Second)) || res.Requests != 1 {
				t.Fatal(res, err)
			}
			if time.Since(start) != 0 {
				t.Fatal("waited before returning")
			}
		})
	})
	t.Run("429 Retry-After 25 h is capped at 24 h and not waited", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := setup(t, nil, nil)
			b.d.Enqueue(directorytest.Reply{StatusCode: 429, Code: directory.CodeRateLimited, RetryAfter: "90000"})
			res, err := b.c.Heartbeat(context.Background(), b.d.Origin(), v1)
			if directory.RetryAfterOf(err) != 24*time.Hour || res.Requests != 1 {
				t.Fatal(res, err)
			}
		})
	})
	t.Run("503 with a past date is invalid and not retried", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := setup(t, nil, nil)
			past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
			b.d.Enqueue(directorytest.Reply{StatusCode: 503, Code: directory.CodeInternalError, RetryAfter: past})
			res, err := b.c.Register(context.Background(), b.d.Origin(), v1)
			if !errors.Is(err, directory.ErrInvalidResponse) || res.Requests != 1 || directory.ClassOf(err) != directory.ClassPermanent {
				t.Fatal(res, err)
			}
		})
	})
	t.Run("503 with an HTTP date is honoured", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := setup(t, nil, nil)
			at := time.Now().Add(20 * time.Second).UTC().Format(http.TimeFormat)
			b.d.Enqueue(directorytest.Reply{StatusCode: 503, Code: directory.CodeInternalError, RetryAfter: at})
			start := time.Now()
			res, err := b.c.Register(context.Background(), b.d.Origin(), v1)
			if err != nil || res.Requests != 2 || time.Since(start) < 19*time.Second {
				t.Fatal(res, err, time.Since(start))
			}
		})
	})
	t.Run("non-retryable classes make one attempt", func(t *testing.T) {
		for _, rp := range []directorytest.Reply{
			{StatusCode: 400, Code: directory.CodeInvalidRequest},
			{StatusCode: 400, Code: directory.CodeUnsupportedProtocolVersion},
			{StatusCode: 401, Code: directory.CodeAuthenticationFailed},
			{StatusCode: 403, Code: directory.CodeEnrollmentClosed},
			{StatusCode: 403, Code: directory.CodeRelaySuspended},
			{StatusCode: 503, Code: directory.CodeLifecycleUnavailable, RetryAfter: "1"},
			{StatusCode: 409, Code: directory.CodeReplayDetected},
		} {
			t.Run(string(rp.Code), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					b := setup(t, nil, nil)
					b.d.Enqueue(rp, rp, rp)
					res, err := b.c.Register(context.Background(), b.d.Origin(), v1)
					if err == nil || res.Requests != 1 || directory.ClassOf(err) != directory.ClassPermanent {
						t.Fatal(res, err)
					}
				})
			})
		}
	})
	t.Run("cancellation during backoff", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := setup(t, nil, nil)
			b.d.Enqueue(directorytest.Reply{StatusCode: 429, Code: directory.CodeRateLimited, RetryAfter: "20"})
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(5*time.Second, cancel)
			_, err := b.c.Register(ctx, b.d.Origin(), v1)
			if !errors.Is(err, context.Canceled) || directory.ClassOf(err) != directory.ClassPermanent {
				t.Fatal(err)
			}
		})
	})
}

func withHTTP(cfg *directory.Config, d directory.Doer) *directory.Config {
	c := *cfg
	c.HTTP = d
	return &c
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		for i := 0; i+len(sub) <= len(s); i++ {
			if s[i:i+len(sub)] == sub {
				return true
			}
		}
	}
	return false
}

// TestMaxAttemptsCappedAtThree: the seed gives transport and internal_error
// failures "at most three attempts"; a larger Config.MaxAttempts or
// CallOpts.MaxAttempts is capped there.
func TestMaxAttemptsCappedAtThree(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cfg, call   int
		wantAttempt int
	}{
		{"config 10", 10, 0, 3},
		{"call 10", 0, 10, 3},
		{"config 10, call 2", 10, 2, 2},
		{"call 1", 0, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := setup(t, nil, nil)
				f := &flaky{inner: b.d.Doer(), fail: 100}
				cfg := withHTTP(b.cfg, f)
				cfg.MaxAttempts = tc.cfg
				c, err := directory.New(testKey(t), cfg)
				if err != nil {
					t.Fatal(err)
				}
				_, err = c.Register(context.Background(), b.d.Origin(), &directory.CallOpts{Version: directory.V1, MaxAttempts: tc.call})
				if directory.ClassOf(err) != directory.ClassRetryable || f.calls != tc.wantAttempt {
					t.Fatalf("%v after %d calls, want %d", err, f.calls, tc.wantAttempt)
				}
			})
		})
	}
}

// TestRateLimitedByFakeDirectory: the fake's real-server buckets drive the
// client's 429 handling. A source limit's Retry-After: 1 is waited out and
// the fresh attempt succeeds; an actor limit's longer Retry-After (53 s
// here) is beyond the interactive 30 s, so the call returns at once with
// RetryAt set.
func TestRateLimitedByFakeDirectory(t *testing.T) {
	t.Run("source limit waited out", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := setup(t, &directorytest.Config{EnrollmentOpen: true, SourceRateBurst: 1}, nil)
			v1 := &directory.CallOpts{Version: directory.V1}
			if _, err := b.c.Register(context.Background(), b.d.Origin(), v1); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			res, err := b.c.Register(context.Background(), b.d.Origin(), v1)
			if err != nil || res.Requests != 2 || time.Since(start) != time.Second {
				t.Fatalf("%v after %d requests and %v", err, res.Requests, time.Since(start))
			}
		})
	})
	t.Run("actor limit returned", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := setup(t, &directorytest.Config{EnrollmentOpen: true, ActorRateBurst: 1}, nil)
			v1 := &directory.CallOpts{Version: directory.V1}
			b.c.Register(context.Background(), b.d.Origin(), v1)
			time.Sleep(7 * time.Second)
			res, err := b.c.Register(context.Background(), b.d.Origin(), v1)
			var re *directory.ResponseError
			if !errors.As(err, &re) || re.Code != directory.CodeRateLimited || re.RetryAfter != 53*time.Second ||
				!re.RetryAt.Equal(time.Now().Add(53*time.Second)) || res.Requests != 1 {
				t.Fatalf("%v (%+v)", err, re)
			}
		})
	})
}
