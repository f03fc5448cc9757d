package directory_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/directorytest"
)

// TestOverTLS runs the lifecycle through the guarded client, TLS and the
// fake Directory on loopback (admitted for tests only).
func TestOverTLS(t *testing.T) {
	d := directorytest.New(&directorytest.Config{EnrollmentOpen: true})
	d.AddKey(keyID, testKey(t).Public())
	hc := d.StartTLS(t)
	c, err := directory.New(testKey(t), &directory.Config{Actor: actor, PublicBaseURL: base,
		Directories: enabled(d.Origin()), HTTP: hc, Profile: fixtureProfile})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := c.Sync(ctx, d.Origin(), nil)
	if err != nil || res.Version != directory.V3 || res.Outcome != directory.OutcomeCreated {
		t.Fatal(res, err)
	}
	if res, err := c.Heartbeat(ctx, d.Origin(), nil); err != nil || res.Outcome != directory.OutcomeRecorded {
		t.Fatal(res, err)
	}
	if res, err := c.Unregister(ctx, d.Origin(), nil); err != nil || res.Outcome != directory.OutcomeRemoved {
		t.Fatal(res, err)
	}
}

// hostile starts a TLS server with handler h as directory.example and a
// client for it.
func hostile(t *testing.T, h http.HandlerFunc) (*directory.Client, string, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	cert, pool := directorytest.TLSCert(t)
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(ts.URL, "https://"))
	origin := "https://" + directorytest.Host + ":" + port
	c, err := directory.New(testKey(t), &directory.Config{Actor: actor, PublicBaseURL: base,
		Directories: enabled(origin), HTTP: directorytest.LoopbackClient(t, pool), MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c, origin, &hits
}

func success(w http.ResponseWriter, extra string) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"protocol_version":1,"operation":"register","outcome":"created","relay_actor":"`+actor+`"`+extra+"}")
}

// TestHostileDirectory: the malicious-Directory containment cases.
func TestHostileDirectory(t *testing.T) {
	v1 := &directory.CallOpts{Version: directory.V1}
	ctx := context.Background()
	cases := []struct {
		name   string
		h      http.HandlerFunc
		reason directory.Reason
	}{
		{"body of exactly 16384 bytes passes", func(w http.ResponseWriter, r *http.Request) {
			pad := 16384 - len(`{"protocol_version":1,"operation":"register","outcome":"created","relay_actor":"`+actor+`"}`)
			success(w, strings.Repeat(" ", pad))
		}, ""},
		{"oversize body 16385 bytes", func(w http.ResponseWriter, r *http.Request) {
			pad := 16385 - len(`{"protocol_version":1,"operation":"register","outcome":"created","relay_actor":"`+actor+`"}`)
			success(w, strings.Repeat(" ", pad))
		}, directory.ReasonTooLarge},
		{"oversize streamed body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			for i := 0; i < 64; i++ {
				io.WriteString(w, strings.Repeat(" ", 1024))
				w.(http.Flusher).Flush()
			}
		}, directory.ReasonTooLarge},
		{"wrong media type", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			io.WriteString(w, `{"protocol_version":1,"operation":"register","outcome":"created","relay_actor":"`+actor+`"}`)
		}, directory.ReasonContentType},
		{"text/plain 404", func(w http.ResponseWriter, r *http.Request) {
			http.NotFound(w, r)
		}, directory.ReasonStatusCode},
		{"duplicate keys", func(w http.ResponseWriter, r *http.Request) {
			success(w, `,"outcome":"updated"`)
		}, directory.ReasonDuplicate},
		{"unknown key", func(w http.ResponseWriter, r *http.Request) {
			success(w, `,"url":"https://evil.example"`)
		}, directory.ReasonUnknownField},
		{"trailing value", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"protocol_version":1,"operation":"register","outcome":"created","relay_actor":"`+actor+`"} {}`)
		}, directory.ReasonTrailing},
		{"compressed body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			success(w, "")
		}, directory.ReasonEncoding},
		{"405 with Allow", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", "POST")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(405)
			io.WriteString(w, `{"protocol_version":1,"error":{"code":"invalid_request","message":"method not allowed"}}`)
		}, directory.ReasonStatusCode},
		{"remote message is discarded", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			io.WriteString(w, `{"protocol_version":1,"error":{"code":"invalid_request","message":"\u001b[31mvisit https://evil.example"}}`)
		}, "rejected"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, origin, _ := hostile(t, tc.h)
			res, err := c.Register(ctx, origin, v1)
			switch tc.reason {
			case "":
				if err != nil || res.Outcome != directory.OutcomeCreated {
					t.Fatal(res, err)
				}
			case "rejected":
				var re *directory.ResponseError
				if !errors.As(err, &re) || re.Code != directory.CodeInvalidRequest || contains(err.Error(), "evil", "\x1b") {
					t.Fatal(err)
				}
			default:
				var ie *directory.InvalidResponseError
				if !errors.As(err, &ie) || ie.Reason != tc.reason {
					t.Fatalf("got %v, want %s", err, tc.reason)
				}
				if tc.reason == directory.ReasonTooLarge && !errors.Is(err, directory.ErrResponseTooLarge) {
					t.Fatal("too large is not distinct")
				}
			}
		})
	}
}

// TestRedirectRefused: a 307 (and 308) on POST makes exactly one call and
// is an invalid response; the status GET does not follow one either.
func TestRedirectRefused(t *testing.T) {
	for _, sc := range []int{301, 302, 307, 308} {
		t.Run(http.StatusText(sc), func(t *testing.T) {
			c, origin, hits := hostile(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "https://directory.example/elsewhere", sc)
			})
			_, err := c.Register(context.Background(), origin, &directory.CallOpts{Version: directory.V1})
			var ie *directory.InvalidResponseError
			if !errors.As(err, &ie) || ie.Reason != directory.ReasonRedirect || hits.Load() != 1 {
				t.Fatalf("%v after %d calls", err, hits.Load())
			}
			hits.Store(0)
			_, err = c.Status(context.Background(), origin)
			if !errors.As(err, &ie) || ie.Reason != directory.ReasonRedirect || hits.Load() != 1 {
				t.Fatalf("status: %v after %d calls", err, hits.Load())
			}
		})
	}
}

// TestSlowHeaders: a Directory that never answers is cut off by the
// caller's deadline (the 15 s budget applies the same way) and the error
// is a retryable timeout without inner text.
func TestSlowHeaders(t *testing.T) {
	release := make(chan struct{})
	c, origin, _ := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.Register(ctx, origin, &directory.CallOpts{Version: directory.V1})
	var te *directory.TransportError
	if !errors.As(err, &te) || !te.Timeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v", err)
	}
	if contains(err.Error(), "127.0.0.1", "directory.example") {
		t.Fatalf("inner text leaked: %v", err)
	}
}

// TestCanceled: a canceled context is reported as such, not retried.
func TestCanceled(t *testing.T) {
	c, origin, hits := hostile(t, func(w http.ResponseWriter, r *http.Request) { success(w, "") })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Register(ctx, origin, &directory.CallOpts{Version: directory.V1})
	if !errors.Is(err, context.Canceled) || directory.ClassOf(err) != directory.ClassPermanent || hits.Load() != 0 {
		t.Fatalf("%v, %d hits", err, hits.Load())
	}
}

// TestNoEnvironmentProxy: proxy variables are ignored.
func TestNoEnvironmentProxy(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1")
	t.Setenv("https_proxy", "http://127.0.0.1:1")
	t.Setenv("ALL_PROXY", "http://127.0.0.1:1")
	c, origin, hits := hostile(t, func(w http.ResponseWriter, r *http.Request) { success(w, "") })
	if _, err := c.Register(context.Background(), origin, &directory.CallOpts{Version: directory.V1}); err != nil || hits.Load() != 1 {
		t.Fatalf("%v, %d hits", err, hits.Load())
	}
}

// TestDefaultGuardRefusesLoopback: without the test-only allowance the
// Directory client configuration refuses a loopback Directory, and the
// refusal is not retried.
func TestDefaultGuardRefusesLoopback(t *testing.T) {
	var hits atomic.Int32
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer ts.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(ts.URL, "https://"))
	cfg := directory.ClientConfig()
	cfg.Resolver = directorytest.LoopbackResolver{}
	hc, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	origin := "https://directory.example:" + port
	c, err := directory.New(testKey(t), &directory.Config{Actor: actor, PublicBaseURL: base, Directories: enabled(origin), HTTP: hc})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Register(context.Background(), origin, &directory.CallOpts{Version: directory.V1})
	var te *directory.TransportError
	if !errors.As(err, &te) || !te.Blocked || directory.ClassOf(err) != directory.ClassPermanent || hits.Load() != 0 {
		t.Fatalf("%v, %d hits", err, hits.Load())
	}
}

// TestTransportTimeouts: the Directory transport sets 5 s dial, TLS
// handshake and response header timeouts (spec 10.1), and each one cuts off
// a Directory that stalls at that stage well before the caller's deadline.
// The stalls are shortened through the same client.Config fields so the
// test stays fast; which layer gave up is read from the caller's context,
// not from a clock.
func TestTransportTimeouts(t *testing.T) {
	cfg := directory.ClientConfig()
	if cfg.DialTimeout != 5*time.Second || cfg.TLSHandshakeTimeout != 5*time.Second || cfg.ResponseHeaderTimeout != 5*time.Second {
		t.Fatalf("dial %v, TLS %v, headers %v; want 5 s each", cfg.DialTimeout, cfg.TLSHandshakeTimeout, cfg.ResponseHeaderTimeout)
	}
	const short = 100 * time.Millisecond
	t.Run("TLSHandshake", func(t *testing.T) {
		// Accepts TCP connections and never says a word of TLS.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		held := make(chan net.Conn, 8)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				held <- c
			}
		}()
		var conns []net.Conn
		t.Cleanup(func() {
			ln.Close()
			<-done
			close(held)
			for c := range held {
				conns = append(conns, c)
			}
			for _, c := range conns {
				c.Close()
			}
		})
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		origin := "https://" + directorytest.Host + ":" + port
		hc := timeoutClient(t, func(c *client.Config) { c.TLSHandshakeTimeout = short }, nil)
		stalledCall(t, hc, origin, func() int {
			// The accept loop may still be catching up with the kernel.
			select {
			case c := <-held:
				conns = append(conns, c)
				return 1
			case <-time.After(10 * time.Second):
				return 0
			}
		})
	})
	t.Run("ResponseHeaders", func(t *testing.T) {
		release := make(chan struct{})
		entered := make(chan struct{}, 8)
		cert, pool := directorytest.TLSCert(t)
		ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			entered <- struct{}{}
			select { // headers never come
			case <-r.Context().Done():
			case <-release:
			}
		}))
		ts.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		ts.StartTLS()
		t.Cleanup(ts.Close)
		t.Cleanup(func() { close(release) })
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(ts.URL, "https://"))
		origin := "https://" + directorytest.Host + ":" + port
		hc := timeoutClient(t, func(c *client.Config) { c.ResponseHeaderTimeout = short }, pool)
		stalledCall(t, hc, origin, func() int {
			select { // the handler may be scheduled late on a loaded machine
			case <-entered:
				return 1
			case <-time.After(10 * time.Second):
				return 0
			}
		})
	})
}

// timeoutClient is the Directory transport reaching loopback, with one
// timeout shortened by tweak.
func timeoutClient(t *testing.T, tweak func(*client.Config), pool *x509.CertPool) *client.Client {
	t.Helper()
	cfg := directory.ClientConfig()
	cfg.AllowPrivate = append(cfg.AllowPrivate, netip.MustParsePrefix("127.0.0.0/8"))
	cfg.Resolver = directorytest.LoopbackResolver{}
	cfg.TLSConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	tweak(cfg)
	hc, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hc.CloseIdleConnections)
	return hc
}

// stalledCall registers once against a stalling origin under a generous
// caller deadline and wants a retryable timeout that the transport, not the
// caller, produced, after the stall was actually reached (reached() > 0,
// which may wait for the stalling side to catch up).
func stalledCall(t *testing.T, hc directory.Doer, origin string, reached func() int) {
	t.Helper()
	c, err := directory.New(testKey(t), &directory.Config{Actor: actor, PublicBaseURL: base,
		Directories: enabled(origin), HTTP: hc, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = c.Register(ctx, origin, &directory.CallOpts{Version: directory.V1})
	var te *directory.TransportError
	if !errors.As(err, &te) || !te.Timeout || directory.ClassOf(err) != directory.ClassRetryable {
		t.Fatalf("%v, want a retryable transport timeout", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the caller's deadline fired first; the transport timeout did not")
	}
	if reached() == 0 {
		t.Fatal("the stalling stage was never reached")
	}
	if contains(err.Error(), "127.0.0.1", directorytest.Host, "handshake", "header") {
		t.Fatalf("inner text leaked: %v", err)
	}
}
