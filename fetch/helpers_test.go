package fetch_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/fetch"
)

// testResolver sends every *.test name to loopback, so test servers can
// have names of their own (mastodon.test:port, lemmy.test:port).
type testResolver struct{}

func (testResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if strings.HasSuffix(host, ".test") {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func newClient(t testing.TB) *client.Client {
	t.Helper()
	c, err := client.New(&client.Config{
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Resolver:     testResolver{},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func newFetcher(t testing.TB, cfg *fetch.Config) *fetch.Fetcher {
	t.Helper()
	if cfg == nil {
		cfg = &fetch.Config{}
	}
	cfg.PlainHTTPWebFinger = true
	f, err := fetch.New(newClient(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// site is a test server impersonating one fediverse server.
type site struct {
	t    testing.TB
	srv  *httptest.Server
	mux  *http.ServeMux
	host string // name:port
	base string // http://name:port
	hits atomic.Int64
}

func newSite(t testing.TB, name string) *site {
	t.Helper()
	s := &site{t: t, mux: http.NewServeMux()}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.srv.Close)
	port := s.srv.Listener.Addr().(*net.TCPAddr).Port
	s.host = fmt.Sprintf("%s:%d", name, port)
	s.base = "http://" + s.host
	return s
}

// url returns the site's URL for path.
func (s *site) url(path string) string { return s.base + path }

// expand replaces {base} in a document template.
func (s *site) expand(body string) string { return strings.ReplaceAll(body, "{base}", s.base) }

// serve answers path with a status, content type and body ({base} expanded).
func (s *site) serve(path string, status int, contentType, body string) {
	body = s.expand(body)
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	})
}

// ap serves an ActivityPub document with Mastodon's content type.
func (s *site) ap(path, body string) {
	s.serve(path, 200, "application/activity+json; charset=utf-8", body)
}
