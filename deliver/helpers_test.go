package deliver_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/delivertest"
	"github.com/fedkit/fedkit/sig"
)

const (
	testKeyID = "https://a.example/users/alice#main-key"
	testActor = "https://a.example/users/alice"
)

var testKey = ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))

func activity(id string) []byte {
	return []byte(`{"@context":"https://www.w3.org/ns/activitystreams","id":"https://a.example/activities/` + id +
		`","type":"Create","actor":"` + testActor + `","object":"https://a.example/notes/1"}`)
}

// deleteActivity is activity(id) as a Delete.
func deleteActivity(id string) []byte {
	return []byte(strings.Replace(string(activity(id)), `"Create"`, `"Delete"`, 1))
}

// orderingInbox answers every Delete at once and fails the first
// failCreates Creates with 503; arrivals lists what came, in order.
func orderingInbox(t *testing.T, clk *clock, failCreates int) (ib *inbox, arrivals func() []string) {
	var mu sync.Mutex
	var order []string
	creates := 0
	ib = newInbox(t, clk, func(r *http.Request, n int) (int, http.Header) {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(ib.requests()[n-1].Body, `"Delete"`) {
			order = append(order, "delete")
			return http.StatusAccepted, nil
		}
		order = append(order, "create")
		if creates++; creates <= failCreates {
			return http.StatusServiceUnavailable, nil
		}
		return http.StatusAccepted, nil
	})
	return ib, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(order)
	}
}

// clock is a manual clock for Config.Now and the inboxes' verifiers.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// keys is a SenderKeys over testKey that counts loads.
type keys struct {
	loads atomic.Int64
	gone  atomic.Bool
	key   crypto.Signer
}

func (k *keys) Key(ctx context.Context, keyID string) (crypto.Signer, error) {
	k.loads.Add(1)
	if keyID != testKeyID {
		return nil, errors.New("no such key")
	}
	if k.key != nil {
		return k.key, nil
	}
	return testKey, nil
}

func (k *keys) Gone(ctx context.Context, keyID string) (bool, error) { return k.gone.Load(), nil }

// resolver gives inboxes the test key's public half.
type resolver struct{ pub crypto.PublicKey }

func (r resolver) ResolveKey(ctx context.Context, id sig.KeyID) (*sig.Key, error) {
	return &sig.Key{Public: r.pub, Owner: testActor}, nil
}

// received is one request an inbox got.
type received struct {
	Path, Date, Signature, Sync string
	ContentType                 string
	Scheme                      sig.Scheme
	Body                        string
	VerifyErr                   error
}

// inbox is a loopback inbox whose answers a test scripts.
type inbox struct {
	srv     *httptest.Server
	mu      sync.Mutex
	got     []received
	respond func(r *http.Request, n int) (int, http.Header) // n counts requests from 1
	// gate, when set, is waited on by every request before it answers.
	gate     chan struct{}
	entered  chan struct{}
	inflight atomic.Int32
	peak     atomic.Int32
	// closeConns answers with Connection: close, for tests in a synctest
	// bubble: an idle keep-alive connection's read is not durably blocking
	// and would stop the bubble's clock.
	closeConns atomic.Bool
}

func newInbox(t *testing.T, clk *clock, respond func(r *http.Request, n int) (int, http.Header)) *inbox {
	t.Helper()
	v, err := sig.NewVerifier(resolver{pub: testKey.Public()}, &sig.VerifierConfig{Now: clk.Now, URLScheme: "http"})
	if err != nil {
		t.Fatal(err)
	}
	ib := &inbox{respond: respond, entered: make(chan struct{}, 1000)}
	ib.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := ib.inflight.Add(1)
		defer ib.inflight.Add(-1)
		for {
			p := ib.peak.Load()
			if n <= p || ib.peak.CompareAndSwap(p, n) {
				break
			}
		}
		res, verr := v.Verify(r)
		rec := received{Path: r.URL.Path, Date: r.Header.Get("Date"), Signature: r.Header.Get("Signature"),
			Sync: r.Header.Get("Collection-Synchronization"), ContentType: r.Header.Get("Content-Type"), VerifyErr: verr}
		if res != nil {
			rec.Scheme = res.Scheme
		}
		var body strings.Builder
		buf := make([]byte, 4096)
		for {
			m, err := r.Body.Read(buf)
			body.Write(buf[:m])
			if err != nil {
				break
			}
		}
		rec.Body = body.String()
		ib.mu.Lock()
		ib.got = append(ib.got, rec)
		count := len(ib.got)
		ib.mu.Unlock()
		select {
		case ib.entered <- struct{}{}:
		default:
		}
		if ib.gate != nil {
			<-ib.gate
		}
		status, h := http.StatusAccepted, http.Header(nil)
		if ib.respond != nil {
			status, h = ib.respond(r, count)
		}
		if verr != nil && status < 300 {
			status = http.StatusUnauthorized
		}
		for k, vs := range h {
			w.Header()[k] = vs
		}
		if ib.closeConns.Load() {
			w.Header().Set("Connection", "close")
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(ib.srv.Close)
	return ib
}

func (ib *inbox) URL(path string) string { return ib.srv.URL + path }

// hold makes requests wait at the inbox until the returned release is
// called; the test's cleanup releases them too, so a failing test does not
// hang closing the server.
func (ib *inbox) hold(t *testing.T) (release func()) {
	gate := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	ib.gate = gate
	t.Cleanup(release)
	return release
}

func (ib *inbox) requests() []received {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	return append([]received(nil), ib.got...)
}

func status(code int) func(*http.Request, int) (int, http.Header) {
	return func(*http.Request, int) (int, http.Header) { return code, nil }
}

type bundle struct {
	d     *deliver.Deliverer
	q     *deliver.MemoryQueue
	keys  *keys
	clock *clock
	rec   *delivertest.Recorder
	cfg   *deliver.Config
}

func testClient(t testing.TB) *client.Client {
	t.Helper()
	c, err := client.New(&client.Config{AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// setup builds a Deliverer on a MemoryQueue with a manual clock and
// recording hooks; edit adjusts the Config first.
func setup(t *testing.T, edit func(*deliver.Config)) *bundle {
	t.Helper()
	b := &bundle{q: &deliver.MemoryQueue{}, keys: &keys{}, clock: newClock(), rec: &delivertest.Recorder{}}
	cfg := deliver.DefaultConfig()
	cfg.Now = b.clock.Now
	b.rec.Install(cfg)
	if edit != nil {
		edit(cfg)
	}
	b.cfg = cfg
	d, err := deliver.New(b.q, b.keys, testClient(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.d = d
	return b
}

func (b *bundle) send(t *testing.T, id string, inboxes ...string) {
	t.Helper()
	b.sendBatch(t, id, deliver.Batch{}, inboxes...)
}

func (b *bundle) sendBatch(t *testing.T, id string, batch deliver.Batch, inboxes ...string) {
	t.Helper()
	if err := b.d.SendBatch(context.Background(), testKeyID, activity(id), inboxes, batch); err != nil {
		t.Fatalf("SendBatch: %v", err)
	}
}

func (b *bundle) runDue(t *testing.T) int {
	t.Helper()
	n, err := b.d.RunDue(context.Background())
	if err != nil {
		t.Fatalf("RunDue: %v", err)
	}
	return n
}

// startRun runs d.Run until the returned stop is called; stop waits for
// Run to return and fails t if it returns an error.
func startRun(t *testing.T, d *deliver.Deliverer) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	return func() {
		t.Helper()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}
