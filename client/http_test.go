package client

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func okHandler(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, body) }
}

// chain serves /hop/N, redirecting to /hop/N-1 with the given status until
// /hop/0 answers "done"; hits counts requests per path.
type chain struct {
	mu     sync.Mutex
	hits   map[string]int
	status int
}

func (c *chain) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.hits[r.Method+" "+r.URL.Path]++
	c.mu.Unlock()
	n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if n == 0 {
		io.WriteString(w, "done")
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), c.status)
}

func (c *chain) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits[key]
}

func chainServer(t *testing.T, status int) (*httptest.Server, *chain) {
	ch := &chain{hits: map[string]int{}, status: status}
	return server(t, ch.ServeHTTP), ch
}

func TestRedirects(t *testing.T) {
	t.Parallel()
	for _, status := range []int{301, 302, 303, 307, 308} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			t.Parallel()
			srv, _ := chainServer(t, status)
			b := setup(t, &Config{AllowPrivate: loopback})

			var signed []string
			sign := func(r *http.Request) error {
				signed = append(signed, r.URL.String())
				if r.Header.Get("Signature") != "" {
					t.Errorf("hop %s arrived carrying the previous hop's signature", r.URL)
				}
				r.Header.Set("Signature", "sig-for "+r.URL.Path)
				return nil
			}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/hop/3", nil)
			resp, err := b.c.DoWith(req, &DoOpts{Sign: sign})
			if err != nil {
				t.Fatalf("3 hops: %v", err)
			}
			body, err := ReadAll(resp)
			if err != nil || string(body) != "done" {
				t.Fatalf("body %q, %v", body, err)
			}
			if got, want := resp.Request.URL.String(), srv.URL+"/hop/0"; got != want {
				t.Errorf("final URL %s, want %s", got, want)
			}
			want := []string{srv.URL + "/hop/3", srv.URL + "/hop/2", srv.URL + "/hop/1", srv.URL + "/hop/0"}
			if fmt.Sprint(signed) != fmt.Sprint(want) {
				t.Errorf("signed %v, want once per hop %v", signed, want)
			}
			if req.Header.Get("Signature") != "" {
				t.Error("the caller's request was modified")
			}

			req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/hop/4", nil)
			_, err = b.c.Do(req)
			var tm *TooManyRedirectsError
			if !errors.As(err, &tm) || tm.Max != 3 || tm.StatusCode != status || tm.URL != srv.URL+"/hop/1" {
				t.Fatalf("4 hops: %v, want *TooManyRedirectsError at /hop/1", err)
			}
		})
	}
}

func TestRedirectHeadersAcrossOrigins(t *testing.T) {
	t.Parallel()
	var gotAuth, gotAccept string
	dst := server(t, func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotAccept = r.Header.Get("Authorization"), r.Header.Get("Accept")
	})
	src := server(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, dst.URL+"/doc", http.StatusFound)
	})
	b := setup(t, &Config{AllowPrivate: loopback})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, src.URL, nil)
	req.Header.Set("Authorization", "Bearer secret")
	req.Header.Set("Accept", "application/activity+json")
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if gotAuth != "" || gotAccept != "application/activity+json" {
		t.Errorf("cross-origin hop got Authorization %q, Accept %q", gotAuth, gotAccept)
	}
}

func TestNoRedirects(t *testing.T) {
	t.Parallel()
	srv, ch := chainServer(t, http.StatusFound)
	b := setup(t, &Config{AllowPrivate: loopback, MaxRedirects: NoRedirects})
	_, err := get(t, b.c, srv.URL+"/hop/1")
	var tm *TooManyRedirectsError
	if !errors.As(err, &tm) || tm.Max != 0 || tm.Location != "/hop/0" {
		t.Fatalf("Do = %v, want *TooManyRedirectsError with Max 0", err)
	}
	if ch.count("GET /hop/0") != 0 {
		t.Error("redirect followed")
	}
}

func TestPostRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	for _, status := range []int{301, 302, 303, 307, 308} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			t.Parallel()
			srv, ch := chainServer(t, status)
			b := setup(t, &Config{AllowPrivate: loopback})
			signs := 0
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/hop/1", strings.NewReader(`{"type":"Create"}`))
			_, err := b.c.DoWith(req, &DoOpts{Sign: func(*http.Request) error { signs++; return nil }})
			var re *RedirectError
			if !errors.As(err, &re) || re.StatusCode != status || re.Method != http.MethodPost || re.Location != "/hop/0" {
				t.Fatalf("Do = %v, want *RedirectError %d", err, status)
			}
			if n := ch.count("POST /hop/0") + ch.count("GET /hop/0"); n != 0 {
				t.Errorf("redirect target requested %d times", n)
			}
			if ch.count("POST /hop/1") != 1 || signs != 1 {
				t.Errorf("POST sent %d times, signed %d times; want once each", ch.count("POST /hop/1"), signs)
			}
		})
	}
}

func TestRedirectToRefusedAddress(t *testing.T) {
	t.Parallel()
	b := setup(t, &Config{AllowPrivate: loopback})
	b.res.set("internal.example", []netip.Addr{netip.MustParseAddr("10.0.0.5")})
	for name, target := range map[string]string{
		"literal":     "http://169.254.169.254/latest/meta-data/",
		"by name":     "http://internal.example/admin",
		"mapped":      "http://[::ffff:a00:5]/",
		"bad scheme":  "gopher://example.com/",
		"hidden host": "http://abc.onion/",
	} {
		t.Run(name, func(t *testing.T) {
			srv := server(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Location", target)
				w.WriteHeader(http.StatusFound)
			})
			_, err := get(t, b.c, srv.URL)
			if !errors.Is(err, ErrBlocked) && !errors.Is(err, ErrInvalidURL) && !errors.Is(err, ErrHiddenService) {
				t.Fatalf("Do = %v, want a refusal", err)
			}
		})
	}
	for _, d := range b.dials.list() {
		if !netip.MustParseAddrPort(d).Addr().IsLoopback() {
			t.Errorf("dialled %s", d)
		}
	}
}

func TestRedirectLoop(t *testing.T) {
	t.Parallel()
	srv := server(t, func(w http.ResponseWriter, r *http.Request) {
		next := map[string]string{"/a": "/b", "/b": "/a#frag", "/self": "/self"}[r.URL.Path]
		http.Redirect(w, r, next, http.StatusFound)
	})
	b := setup(t, &Config{AllowPrivate: loopback})
	for _, path := range []string{"/a", "/self"} {
		if _, err := get(t, b.c, srv.URL+path); !errors.Is(err, ErrRedirectLoop) {
			t.Errorf("%s: Do = %v, want ErrRedirectLoop", path, err)
		}
	}
}

// sized serves n bytes at /cl/n with Content-Length and at /chunked/n
// without, flushing first so no length can be known.
func sizedServer(t *testing.T) *httptest.Server {
	return server(t, func(w http.ResponseWriter, r *http.Request) {
		kind, num, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		n, _ := strconv.Atoi(num)
		if kind == "cl" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		} else {
			w.(http.Flusher).Flush()
		}
		w.Write(bytes.Repeat([]byte("a"), n))
	})
}

func TestBodyCap(t *testing.T) {
	t.Parallel()
	srv := sizedServer(t)
	b := setup(t, &Config{AllowPrivate: loopback})
	const mib = 1 << 20
	for _, kind := range []string{"cl", "chunked"} {
		t.Run(kind, func(t *testing.T) {
			resp, err := get(t, b.c, fmt.Sprintf("%s/%s/%d", srv.URL, kind, mib))
			if err != nil {
				t.Fatalf("exactly 1 MiB: %v", err)
			}
			body, err := ReadAll(resp)
			if err != nil || len(body) != mib {
				t.Fatalf("exactly 1 MiB: read %d bytes, %v", len(body), err)
			}

			resp, err = get(t, b.c, fmt.Sprintf("%s/%s/%d", srv.URL, kind, mib+1))
			limit := fmt.Sprintf("%d-byte limit", mib)
			if kind == "cl" {
				if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), limit) || !strings.Contains(err.Error(), fmt.Sprint(mib+1)) {
					t.Fatalf("1 MiB + 1 with Content-Length: Do = %v, want ErrTooLarge naming the length and the limit", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("1 MiB + 1 streamed: Do = %v", err)
			}
			body, err = ReadAll(resp)
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), limit) {
				t.Fatalf("1 MiB + 1 streamed: ReadAll = %d bytes, %v, want ErrTooLarge naming the limit", len(body), err)
			}
			if len(body) > mib {
				t.Errorf("read %d bytes past the cap", len(body))
			}
		})
	}
}

func TestHeadIgnoresCap(t *testing.T) {
	t.Parallel()
	srv := sizedServer(t)
	b := setup(t, &Config{AllowPrivate: loopback})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodHead, srv.URL+"/cl/5000000", nil)
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatalf("HEAD of a large document: %v", err)
	}
	resp.Body.Close()
	if resp.ContentLength != 5000000 {
		t.Errorf("ContentLength %d", resp.ContentLength)
	}
}

func TestBodyCapConfigured(t *testing.T) {
	t.Parallel()
	srv := sizedServer(t)
	b := setup(t, &Config{AllowPrivate: loopback, MaxBodyBytes: 10})
	resp, err := get(t, b.c, srv.URL+"/chunked/10")
	if err != nil {
		t.Fatal(err)
	}
	if body, err := ReadAll(resp); err != nil || len(body) != 10 {
		t.Fatalf("10 bytes under a 10-byte cap: %d, %v", len(body), err)
	}
	resp, err = get(t, b.c, srv.URL+"/chunked/11")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAll(resp); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("11 bytes under a 10-byte cap: %v, want ErrTooLarge", err)
	}
}

func TestStreamUncapped(t *testing.T) {
	t.Parallel()
	srv := sizedServer(t)
	b := setup(t, &Config{AllowPrivate: loopback, MaxBodyBytes: 100})
	for _, kind := range []string{"cl", "chunked"} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/"+kind+"/5000", nil)
		resp, err := b.c.DoWith(req, &DoOpts{Stream: true})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || n != 5000 {
			t.Errorf("%s: streamed %d bytes, %v", kind, n, err)
		}
	}
	// The stream is still guarded.
	b.res.set("internal.example", []netip.Addr{netip.MustParseAddr("192.168.0.1")})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://internal.example/media.png", nil)
	if _, err := b.c.DoWith(req, &DoOpts{Stream: true}); !errors.Is(err, ErrBlocked) {
		t.Errorf("stream to a private address: %v", err)
	}
}

// trickle accepts connections, writes head at once and then payload one
// byte at a time, pausing between them, until the client hangs up.
func trickle(t *testing.T, head, payload string, pause time.Duration) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				br := bufio.NewReader(conn)
				if _, err := http.ReadRequest(br); err != nil {
					return
				}
				if _, err := io.WriteString(conn, head); err != nil {
					return
				}
				for i := 0; i < len(payload); i++ {
					if _, err := conn.Write([]byte{payload[i]}); err != nil {
						return
					}
					time.Sleep(pause)
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

func TestTrickleHeaders(t *testing.T) {
	t.Parallel()
	url := trickle(t, "", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Slow: "+strings.Repeat("x", 200)+"\r\n\r\n", 20*time.Millisecond)
	b := setup(t, &Config{AllowPrivate: loopback, ResponseHeaderTimeout: 100 * time.Millisecond})
	_, err := get(t, b.c, url)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("Do = %v, want ErrTimeout", err)
	}
	if !strings.Contains(err.Error(), "no response headers within 100ms") {
		t.Errorf("error %q does not name the header timeout", err)
	}
}

func TestHeaderTimeoutEndsAtHeaders(t *testing.T) {
	t.Parallel()
	// The headers come at once, the body over about 300 ms, three times the
	// header timeout: only the overall timeout bounds the body.
	url := trickle(t, "HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n", strings.Repeat("z", 20), 15*time.Millisecond)
	b := setup(t, &Config{AllowPrivate: loopback, ResponseHeaderTimeout: 100 * time.Millisecond})
	resp, err := get(t, b.c, url)
	if err != nil {
		t.Fatal(err)
	}
	if body, err := ReadAll(resp); err != nil || len(body) != 20 {
		t.Fatalf("ReadAll read %d bytes, %v", len(body), err)
	}
}

func TestTrickleBody(t *testing.T) {
	t.Parallel()
	url := trickle(t, "HTTP/1.1 200 OK\r\nContent-Length: 200\r\n\r\n", strings.Repeat("y", 200), 20*time.Millisecond)
	b := setup(t, &Config{AllowPrivate: loopback, Timeout: 300 * time.Millisecond, ResponseHeaderTimeout: time.Minute})
	resp, err := get(t, b.c, url)
	if err != nil {
		// The overall timeout may already fire while the headers trickle.
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("Do = %v, want success or ErrTimeout", err)
		}
		return
	}
	if _, err := ReadAll(resp); !errors.Is(err, ErrTimeout) {
		t.Fatalf("ReadAll = %v, want ErrTimeout", err)
	}
}

func TestHeaderSizeBounded(t *testing.T) {
	t.Parallel()
	srv := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Big", strings.Repeat("h", 8<<10))
	})
	b := setup(t, &Config{AllowPrivate: loopback, MaxResponseHeaderBytes: 4 << 10})
	if _, err := get(t, b.c, srv.URL); err == nil {
		t.Fatal("8 KiB header accepted under a 4 KiB bound")
	}
	b = setup(t, &Config{AllowPrivate: loopback})
	resp, err := get(t, b.c, srv.URL)
	if err != nil {
		t.Fatalf("8 KiB header under the default bound: %v", err)
	}
	resp.Body.Close()
}

func TestCompression(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	srv := server(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Accept-Encoding"))
		mu.Unlock()
	})
	for _, disable := range []bool{false, true} {
		b := setup(t, &Config{AllowPrivate: loopback, DisableCompression: disable})
		resp, err := get(t, b.c, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if len(got) != 2 || got[0] != "gzip" || got[1] != "" {
		t.Errorf("Accept-Encoding = %q, want gzip then none", got)
	}
}

// TestTLSServerNameIsHost dials the checked IP but verifies the certificate
// against the URL's host name.
func TestTLSServerNameIsHost(t *testing.T) {
	t.Parallel()
	var sni atomic.Value
	srv := httptest.NewUnstartedServer(okHandler("tls ok"))
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		sni.Store(h.ServerName)
		return nil, nil
	}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	b := setup(t, &Config{AllowPrivate: loopback, TLSConfig: &tls.Config{RootCAs: pool}})
	b.res.set("example.com", []netip.Addr{netip.MustParseAddr("127.0.0.1")})
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	resp, err := get(t, b.c, "https://example.com:"+port+"/")
	if err != nil {
		t.Fatal(err)
	}
	body, err := ReadAll(resp)
	if err != nil || string(body) != "tls ok" {
		t.Fatalf("body %q, %v", body, err)
	}
	if sni.Load() != "example.com" {
		t.Errorf("SNI %v, want example.com", sni.Load())
	}
	if resp.ProtoMajor != 2 {
		t.Errorf("protocol %s, want HTTP/2", resp.Proto)
	}
	if d := b.dials.list(); len(d) != 1 || d[0] != "127.0.0.1:"+port {
		t.Errorf("dials %v, want the checked address", d)
	}
}

func TestUserAgent(t *testing.T) {
	t.Parallel()
	var ua atomic.Value
	srv := server(t, func(w http.ResponseWriter, r *http.Request) { ua.Store(r.Header.Get("User-Agent")) })
	b := setup(t, &Config{AllowPrivate: loopback})
	resp, err := get(t, b.c, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ua.Load() != UserAgentDefault {
		t.Errorf("User-Agent %v", ua.Load())
	}
}

func TestStreamLiftsTimeout(t *testing.T) {
	t.Parallel()
	// The headers come at once, the body over about 300 ms, twice Timeout.
	url := trickle(t, "HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n", strings.Repeat("z", 20), 15*time.Millisecond)
	b := setup(t, &Config{AllowPrivate: loopback, Timeout: 150 * time.Millisecond})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	resp, err := b.c.DoWith(req, &DoOpts{Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if body, err := io.ReadAll(resp.Body); err != nil || len(body) != 20 {
		t.Fatalf("stream read %d bytes, %v", len(body), err)
	}
}

type blockingResolver struct{}

func (blockingResolver) LookupNetIP(ctx context.Context, _, _ string) ([]netip.Addr, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestResolveTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, &Config{Resolver: blockingResolver{}, ResolveTimeout: 50 * time.Millisecond})
	if _, err := get(t, b.c, "https://slow-dns.example/"); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Do = %v, want ErrTimeout", err)
	}
}

func TestSignError(t *testing.T) {
	t.Parallel()
	srv, ch := chainServer(t, http.StatusFound)
	b := setup(t, &Config{AllowPrivate: loopback})
	boom := errors.New("no key")
	calls := 0
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/hop/1", nil)
	_, err := b.c.DoWith(req, &DoOpts{Sign: func(*http.Request) error {
		calls++
		if calls == 2 {
			return boom
		}
		return nil
	}})
	if !errors.Is(err, boom) || ch.count("GET /hop/0") != 0 {
		t.Fatalf("Do = %v, hop sent %d times; want the signing error and no unsigned hop", err, ch.count("GET /hop/0"))
	}
}

func TestRequestShapeAsHTTPClient(t *testing.T) {
	t.Parallel()
	srv := server(t, func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		io.WriteString(w, user+":"+pass)
	})
	b := setup(t, &Config{AllowPrivate: loopback})
	t.Run("URL credentials become Basic auth", func(t *testing.T) {
		u := strings.Replace(srv.URL, "http://", "http://alice:s3cret@", 1)
		resp, err := get(t, b.c, u)
		if err != nil {
			t.Fatal(err)
		}
		if body, _ := ReadAll(resp); string(body) != "alice:s3cret" {
			t.Errorf("server saw %q", body)
		}
	})
	t.Run("RequestURI refused", func(t *testing.T) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
		req.RequestURI = "/"
		var ue *url.Error
		if _, err := b.c.Do(req); !errors.As(err, &ue) {
			t.Errorf("Do = %v, want a *url.Error", err)
		}
	})
	t.Run("transport errors are url errors", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		var ue *url.Error
		_, err = get(t, b.c, "http://"+addr+"/x")
		if !errors.As(err, &ue) || ue.Op != "Get" || ue.URL != "http://"+addr+"/x" {
			t.Errorf("Do = %#v, want *url.Error{Op: Get}", err)
		}
	})
}

// TestRedirectSchemeDowngrade: an https GET redirected to http is refused
// before the http hop is signed or sent, unless Config.AllowSchemeDowngrade.
func TestRedirectSchemeDowngrade(t *testing.T) {
	t.Parallel()
	var plainHits atomic.Int32
	plain := server(t, func(w http.ResponseWriter, r *http.Request) {
		plainHits.Add(1)
		io.WriteString(w, "plain")
	})
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/down":
			http.Redirect(w, r, plain.URL+"/doc", http.StatusFound)
		case "/same":
			http.Redirect(w, r, "/doc", http.StatusFound)
		default:
			io.WriteString(w, "tls")
		}
	}))
	t.Cleanup(tlsSrv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(tlsSrv.Certificate())

	for _, tc := range []struct {
		name      string
		allow     bool
		path      string
		wantErr   bool
		wantBody  string
		wantSigns int
	}{
		{name: "https to http refused", path: "/down", wantErr: true, wantSigns: 1},
		{name: "https to http allowed for development", allow: true, path: "/down", wantBody: "plain", wantSigns: 2},
		{name: "https to https followed", path: "/same", wantBody: "tls", wantSigns: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, &Config{AllowPrivate: loopback, AllowSchemeDowngrade: tc.allow, TLSConfig: &tls.Config{RootCAs: pool}})
			before := plainHits.Load()
			signs := 0
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, tlsSrv.URL+tc.path, nil)
			resp, err := b.c.DoWith(req, &DoOpts{Sign: func(*http.Request) error { signs++; return nil }})
			if tc.wantErr {
				if !errors.Is(err, ErrSchemeDowngrade) || !strings.Contains(err.Error(), tlsSrv.URL+tc.path) || !strings.Contains(err.Error(), plain.URL+"/doc") {
					t.Fatalf("Do = %v, want ErrSchemeDowngrade naming both URLs", err)
				}
				if n := plainHits.Load() - before; n != 0 {
					t.Errorf("http hop sent %d times", n)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				body, err := ReadAll(resp)
				if err != nil || string(body) != tc.wantBody {
					t.Fatalf("body %q, %v; want %q", body, err, tc.wantBody)
				}
			}
			if signs != tc.wantSigns {
				t.Errorf("signed %d times, want %d", signs, tc.wantSigns)
			}
		})
	}
}
