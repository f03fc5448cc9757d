package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Fail on leaked goroutines; the pooled connections' readers are closed
	// by each test's cleanup.
	goleak.VerifyTestMain(m)
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// fakeResolver answers from a table; calls counts lookups per host.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr // per host, one answer per call; the last repeats
	calls   map[string]int
}

func newResolver() *fakeResolver {
	return &fakeResolver{answers: map[string][][]netip.Addr{}, calls: map[string]int{}}
}

func (f *fakeResolver) set(host string, answers ...[]netip.Addr) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[host] = answers
}

func (f *fakeResolver) count(host string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[host]
}

func (f *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.calls[host]
	f.calls[host] = n + 1
	a := f.answers[host]
	if len(a) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return a[min(n, len(a)-1)], nil
}

// dialLog records every address the client tries to connect to. Addresses
// in route are connected to their mapped loopback address instead (standing
// in for a public server); loopback addresses are dialled as they are;
// anything else fails without touching the network.
type dialLog struct {
	mu    sync.Mutex
	addrs []string
	route map[string]string
}

func (d *dialLog) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.addrs = append(d.addrs, addr)
	target, ok := d.route[addr]
	d.mu.Unlock()
	if !ok {
		ap, err := netip.ParseAddrPort(addr)
		if err != nil || !ap.Addr().IsLoopback() {
			return nil, errors.New("test: dial outside loopback")
		}
		target = addr
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, target)
}

func (d *dialLog) list() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.addrs...)
}

// bundle is what most tests need: a client whose resolver and dials the
// test controls.
type bundle struct {
	c     *Client
	res   *fakeResolver
	dials *dialLog
}

func setup(t testing.TB, cfg *Config) *bundle {
	t.Helper()
	if cfg == nil {
		cfg = &Config{}
	}
	res := newResolver()
	if cfg.Resolver == nil {
		cfg.Resolver = res
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dl := &dialLog{route: map[string]string{}}
	c.dial = dl.dial
	t.Cleanup(c.CloseIdleConnections)
	return &bundle{c: c, res: res, dials: dl}
}

// server starts an httptest server closed at cleanup.
func server(t testing.TB, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func get(t testing.TB, c *Client, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.Do(req)
}
