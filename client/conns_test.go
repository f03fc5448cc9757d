package client

import (
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// MaxConnsPerHost holds further requests until a connection is free, so a
// remote host never sees more than the bound at once.
func TestMaxConnsPerHost(t *testing.T) {
	for _, tc := range []struct {
		name    string
		bound   int
		wantMax int32
	}{
		{name: "bounded to one", bound: 1, wantMax: 1},
		{name: "bounded to two", bound: 2, wantMax: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var inFlight, peak atomic.Int32
			release := make(chan struct{})
			arrived := make(chan struct{}, 8)
			s := server(t, func(w http.ResponseWriter, r *http.Request) {
				n := inFlight.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				arrived <- struct{}{}
				<-release
				inFlight.Add(-1)
			})
			b := setup(t, &Config{
				AllowPrivate:    []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
				MaxConnsPerHost: tc.bound,
			})
			// HTTP/1.1 only on plain loopback: one request per connection.
			var wg sync.WaitGroup
			for i := 0; i < 4; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					resp, err := get(t, b.c, s.URL)
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
				}()
			}
			// Wait until the bound is reached, then give the other requests
			// a moment in which, unbounded, they would arrive too.
			for i := 0; i < tc.bound; i++ {
				<-arrived
			}
			select {
			case <-arrived:
				t.Errorf("request %d arrived while %d were in flight", tc.bound+1, tc.bound)
			case <-time.After(300 * time.Millisecond):
			}
			close(release)
			wg.Wait()
			if got := peak.Load(); got != tc.wantMax {
				t.Fatalf("peak concurrent requests = %d, want %d", got, tc.wantMax)
			}
		})
	}
}
