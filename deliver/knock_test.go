package deliver_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/internal/fedsim"
	"github.com/fedkit/fedkit/sig"
)

// A delivery is never sent twice because of the double knock: the second
// knock follows a signature refusal (400, 401, 403) only, never a 2xx, a
// 5xx, another 4xx, a timeout or a dropped connection, and happens at most
// once per attempt.
func TestSecondKnockOnlyAfterRefusal(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		first func(w http.ResponseWriter, r *http.Request) int // 0: hijacked or timed out
		want  int                                              // requests in the one attempt
	}{
		{"200", answer(200), 1},
		{"202", answer(202), 1},
		{"204", answer(204), 1},
		{"500", answer(500), 1},
		{"502", answer(502), 1},
		{"503", answer(503), 1},
		{"404", answer(404), 1},
		{"408", answer(408), 1},
		{"410", answer(410), 1},
		{"429", answer(429), 1},
		{"timeout", func(w http.ResponseWriter, r *http.Request) int {
			// Read the body so the server notices the client hanging up.
			_, _ = io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
			return 0
		}, 1},
		{"connection dropped", func(w http.ResponseWriter, r *http.Request) int {
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					_ = c.Close()
				}
			}
			return 0
		}, 1},
		{"400", answer(400), 2},
		{"401", answer(401), 2},
		{"403", answer(403), 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, func(c *deliver.Config) {
				c.AttemptTimeout = 300 * time.Millisecond
				c.Retry = deliver.ExponentialRetry(time.Second, time.Second, 1)
			})
			ib := newKnockInbox(t, tc.first, answer(202))
			b.send(t, "1", ib.URL("/inbox"))
			b.runDue(t)
			if n := ib.count(); n != tc.want {
				t.Fatalf("%d requests after a %s, want %d", n, tc.name, tc.want)
			}
			if atts := b.rec.Attempts(); len(atts) != 1 {
				t.Fatalf("%d attempts, want 1", len(atts))
			}
		})
	}
}

// When both knocks are refused, each later attempt knocks twice again, and
// never a third time.
func TestSecondKnockOncePerAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *deliver.Config) {
		c.Permanent = func(int) bool { return false } // keep 401 retryable
		c.Retry = deliver.ExponentialRetry(time.Second, time.Second, 3)
		c.DisableBreaker = true
	})
	ib := newKnockInbox(t, answer(401), answer(401))
	b.send(t, "1", ib.URL("/inbox"))
	for i := 1; i <= 3; i++ {
		b.runDue(t)
		if n := ib.count(); n != 2*i {
			t.Fatalf("after attempt %d: %d requests, want %d", i, n, 2*i)
		}
		b.clock.Advance(2 * time.Second)
	}
	if atts := b.rec.Attempts(); len(atts) != 3 {
		t.Fatalf("%d attempts, want 3", len(atts))
	}
}

func answer(code int) func(http.ResponseWriter, *http.Request) int {
	return func(w http.ResponseWriter, _ *http.Request) int { w.WriteHeader(code); return code }
}

// knockInbox answers each attempt's first request (the odd ones) with
// first and the second knock with rest, and counts requests.
type knockInbox struct {
	srv *httptest.Server
	n   atomic.Int32
}

func newKnockInbox(t *testing.T, first, rest func(http.ResponseWriter, *http.Request) int) *knockInbox {
	ib := &knockInbox{}
	ib.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ib.n.Add(1)%2 == 1 {
			first(w, r)
			return
		}
		rest(w, r)
	}))
	t.Cleanup(ib.srv.Close)
	return ib
}

func (ib *knockInbox) URL(path string) string { return ib.srv.URL + path }

func (ib *knockInbox) count() int { return int(ib.n.Load()) }

// Neither negotiation nor the re-probe adds a knock: a 401 carrying
// Accept-Signature earns one second knock, signed as asked, and a second
// refusal ends the attempt; a re-probe answered 503 is not followed by a
// draft-cavage knock.
func TestNegotiationAndReprobeKnockOncePerAttempt(t *testing.T) {
	t.Parallel()
	t.Run("Accept-Signature refused twice", func(t *testing.T) {
		t.Parallel()
		b := setupSim(t, nil)
		asked := `sig1=("@method" "@target-uri" "@authority" "content-digest");created;nonce`
		b.sim.SetHost("picky.example", fedsim.Profile{Check: func(*http.Request, []byte) (int, http.Header) {
			return 401, http.Header{"Accept-Signature": {asked}}
		}})
		b.deliverOne(t, "1", "picky.example")
		if n := b.sim.Stats("picky.example").Received; n != 2 {
			t.Fatalf("%d requests, want 2", n)
		}
	})
	t.Run("re-probe answered 503", func(t *testing.T) {
		t.Parallel()
		b := setupSim(t, func(c *deliver.Config) { c.FirstScheme = sig.SchemeCavage })
		b.deliverOne(t, "1", "h.example") // cavage, remembered
		b.sim.SetHost("h.example", fedsim.Profile{Status: 503})
		b.clock.Advance(deliver.ReprobeAfterDefault)
		b.deliverOne(t, "2", "h.example")
		if got, want := b.schemes("h.example"), []string{"cavage", "rfc9421"}; !slices.Equal(got, want) {
			t.Fatalf("requests %v, want %v", got, want)
		}
	})
}
