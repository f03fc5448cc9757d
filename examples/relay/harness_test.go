package main

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/examples/relay/internal/config"
	"github.com/fedkit/fedkit/sig"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

func testKey(t testing.TB, name string) crypto.Signer {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "keys", name+".pem"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := sig.ParsePrivateKeyPEM(b)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// fastDeliver makes retries and polling quick enough for tests. Attempts
// are many (a window of about 3 s) so that on a loaded machine a slow
// answer does not make a job give up, which would let a Delete overtake
// its Create legitimately.
func fastDeliver(c *deliver.Config) {
	c.Breaker.Threshold = 3
	c.Retry = deliver.ExponentialRetry(20*time.Millisecond, 100*time.Millisecond, 30)
	c.PollInterval = 10 * time.Millisecond
	c.ShutdownGrace = 5 * time.Second
}

func testEnv(t testing.TB) (*env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &env{stdout: &out, stderr: &syncWriter{w: &errb}, lookupEnv: func(string) (string, bool) { return "", false },
		allowPrivate: loopback, tuneDeliver: fastDeliver, logLevel: slog.LevelWarn}, &out, &errb
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// writeRelayKey installs the relay's test key as dir/actor.pem, so no test
// pays for generating one.
func writeRelayKey(t testing.TB, dir string) {
	t.Helper()
	pemBytes, err := os.ReadFile(filepath.Join("testdata", "keys", "relay.pem"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "actor.pem"), pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
}

// serverConfig writes the relay's key and a config.yml holding yml (which
// should say DATA_DIR: .) into a fresh directory, and returns the file's path.
func serverConfig(t testing.TB, yml string) string {
	t.Helper()
	dir := t.TempDir()
	writeRelayKey(t, dir)
	p := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(p, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// process is `relay ARGS` running in the background as its own process
// would, until stop (its SIGTERM) or the end of the test.
type process struct {
	addr string // "" for a worker
	app  *app
	errb *bytes.Buffer

	cancel context.CancelFunc
	exit   chan int
	once   sync.Once
	code   int
}

// startProcess runs relay with args in e and returns once it serves (a
// server) or delivers (a worker).
func startProcess(t testing.TB, e *env, errb *bytes.Buffer, args ...string) *process {
	t.Helper()
	p := &process{errb: errb, exit: make(chan int, 1)}
	ready := make(chan struct{})
	e.ready = func(addr string, a *app) { p.addr, p.app = addr, a; close(ready) }
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go func() { p.exit <- run(ctx, args, e) }()
	select {
	case <-ready:
	case code := <-p.exit:
		cancel()
		t.Fatalf("relay %v exited %d:\n%s", args, code, errb)
	}
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop cancels the process's context, as SIGTERM does, and returns its exit code.
func (p *process) stop(t testing.TB) int {
	t.Helper()
	p.once.Do(func() {
		p.cancel()
		select {
		case p.code = <-p.exit:
		case <-time.After(20 * time.Second):
			t.Fatal("relay did not stop within 20 s of SIGTERM")
		}
	})
	return p.code
}

// testRelay is a relay served by httptest, with its deliverer running.
type testRelay struct {
	app     *app
	srv     *httptest.Server
	url     string
	cfgPath string
}

// startRelay opens the relay on dataDir (a fresh one when ""), with extra
// YAML appended to the configuration.
func startRelay(t *testing.T, dataDir, extraYAML string) *testRelay {
	t.Helper()
	return startRelayOpts(t, dataDir, extraYAML, true)
}

// startRelayOpts is startRelay; deliver false runs no deliverer (a server
// whose deliveries are left to workers, or one about to crash).
func startRelayOpts(t *testing.T, dataDir, extraYAML string, deliver bool) *testRelay {
	t.Helper()
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	if _, err := os.Stat(filepath.Join(dataDir, "actor.pem")); err != nil {
		writeRelayKey(t, dataDir)
	}
	yml := fmt.Sprintf("PUBLIC_URL: %s\nDATA_DIR: %s\nADMIN_TOKEN: test-admin-token-0123456789\n%s", base, dataDir, extraYAML)
	cfgPath := filepath.Join(t.TempDir(), "config.yml")
	if err := os.WriteFile(cfgPath, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, _, _ := testEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	a, err := openApp(ctx, cfg, e, false)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	srv.Config.Handler = a.relay.Handler()
	srv.Start()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if deliver {
			_ = a.deliverer.Run(ctx)
		}
	}()
	t.Cleanup(func() {
		srv.Close()
		cancel()
		<-done
		a.close()
	})
	return &testRelay{app: a, srv: srv, url: base, cfgPath: cfgPath}
}

// instance is a fake fediverse server: an actor with its own key, and an
// inbox that records what arrives and checks the relay's signatures.
type instance struct {
	t      *testing.T
	name   string
	srv    *httptest.Server
	key    crypto.Signer
	signer *sig.Signer
	actor  string // the instance actor, which subscribes
	user   string // an author, who posts (Mastodon signs each post as its author)
	userS  *sig.Signer
	ver    *sig.Verifier

	mu       sync.Mutex
	received []delivery
	failNext map[string]int // "Type objectID" -> 503s still to answer
	down     bool           // every delivery gets 503
	delay    time.Duration  // each delivery is answered after this long
	started  chan struct{}  // signalled when a delivery starts arriving
	arrived  chan struct{}
}

type delivery struct {
	Type     string
	ObjectID string
	Body     []byte
	KeyID    string
	Verified error
}

func newInstance(t *testing.T, name string) *instance {
	t.Helper()
	in := &instance{t: t, name: name, key: testKey(t, name), failNext: map[string]int{}, arrived: make(chan struct{}, 100)}
	mux := http.NewServeMux()
	in.srv = httptest.NewServer(mux)
	t.Cleanup(in.srv.Close)
	in.actor = in.srv.URL + "/actor"
	var err error
	in.signer, err = sig.NewSigner(in.key, in.actor+"#main-key", nil)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := sig.MarshalPublicKeyPEM(in.key.Public())
	if err != nil {
		t.Fatal(err)
	}
	in.user = in.srv.URL + "/users/alice"
	if in.userS, err = sig.NewSigner(in.key, in.user+"#main-key", nil); err != nil {
		t.Fatal(err)
	}
	serveActor := func(id, typ string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/activity+json")
			_ = json.NewEncoder(w).Encode(map[string]any{
				"@context": []string{"https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"},
				"id":       id, "type": typ, "preferredUsername": name,
				"inbox":     id + "/inbox",
				"endpoints": map[string]string{"sharedInbox": in.srv.URL + "/inbox"},
				"publicKey": map[string]string{"id": id + "#main-key", "owner": id, "publicKeyPem": string(pub)},
			})
		}
	}
	mux.HandleFunc("GET /actor", serveActor(in.actor, "Application"))
	mux.HandleFunc("GET /users/alice", serveActor(in.user, "Person"))
	// The instance checks the relay's signatures with the relay's published key.
	in.ver, err = sig.NewVerifier(sig.KeyResolverFunc(fetchActorKey), &sig.VerifierConfig{URLScheme: "http"})
	if err != nil {
		t.Fatal(err)
	}
	mux.HandleFunc("POST /inbox", func(w http.ResponseWriter, r *http.Request) {
		in.mu.Lock()
		delay, started := in.delay, in.started
		in.mu.Unlock()
		if started != nil {
			select {
			case started <- struct{}{}:
			default:
			}
		}
		time.Sleep(delay)
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		res, verr := in.ver.Verify(r)
		var act struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		_ = json.Unmarshal(body, &act)
		d := delivery{Type: act.Type, ObjectID: objectID(act.Object), Body: body, Verified: verr}
		if res != nil {
			d.KeyID = res.KeyID.String()
		}
		in.mu.Lock()
		if in.down {
			in.mu.Unlock()
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		if in.failNext[d.Type+" "+d.ObjectID] > 0 {
			in.failNext[d.Type+" "+d.ObjectID]--
			in.mu.Unlock()
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		in.received = append(in.received, d)
		in.mu.Unlock()
		in.arrived <- struct{}{}
		w.WriteHeader(http.StatusAccepted)
	})
	return in
}

func objectID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(raw, &o)
	return o.ID
}

// fetchActorKey resolves a key by GETting its actor, plainly (test side).
func fetchActorKey(ctx context.Context, id sig.KeyID) (*sig.Key, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, id.Document(), nil)
	req.Header.Set("Accept", "application/activity+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var a struct {
		ID        string `json:"id"`
		PublicKey struct {
			ID, Owner, PublicKeyPem string
		} `json:"publicKey"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		return nil, err
	}
	if a.PublicKey.ID != id.String() {
		return nil, fmt.Errorf("key %s not published", id)
	}
	pub, err := sig.ParsePublicKeyPEM([]byte(a.PublicKey.PublicKeyPem))
	if err != nil {
		return nil, err
	}
	return &sig.Key{Public: pub, Owner: a.ID}, nil
}

// post signs activity with signer (the instance's own when nil) and POSTs it.
func (in *instance) post(to string, activity map[string]any, signer *sig.Signer) int {
	if signer == nil {
		signer = in.signer
	}
	return in.postWith(to, activity, func(r *http.Request) error { return signer.Sign(r, sig.SchemeCavage) })
}

// postWith POSTs activity, signed by sign unless it is nil.
func (in *instance) postWith(to string, activity map[string]any, sign func(*http.Request) error) int {
	in.t.Helper()
	b, _ := json.Marshal(activity)
	req, _ := http.NewRequest(http.MethodPost, to, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/activity+json")
	if sign != nil {
		if err := sign(req); err != nil {
			in.t.Fatal(err)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		in.t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// waitFor waits until the instance has received something matching ok.
func (in *instance) waitFor(what string, ok func(delivery) bool) delivery {
	in.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		in.mu.Lock()
		for _, d := range in.received {
			if ok(d) {
				in.mu.Unlock()
				return d
			}
		}
		in.mu.Unlock()
		select {
		case <-in.arrived:
		case <-deadline:
			in.t.Fatalf("%s never received %s; got %v", in.name, what, in.types())
		}
	}
}

func (in *instance) types() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []string
	for _, d := range in.received {
		out = append(out, d.Type+" "+d.ObjectID)
	}
	return out
}

func (in *instance) count(ok func(delivery) bool) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	n := 0
	for _, d := range in.received {
		if ok(d) {
			n++
		}
	}
	return n
}

func is(typ, object string) func(delivery) bool {
	return func(d delivery) bool { return d.Type == typ && (object == "" || d.ObjectID == object) }
}

var public = "https://www.w3.org/ns/activitystreams#Public"

func (in *instance) follow(r *testRelay, object string) (int, string) {
	id := in.srv.URL + "/follows/" + strings.ReplaceAll(object, "/", "_")
	return in.post(r.url+"/inbox", map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams", "id": id, "type": "Follow", "actor": in.actor, "object": object,
	}, nil), id
}

func (in *instance) note(n string) string { return in.srv.URL + "/notes/" + n }

// create posts a public note as Mastodon sends it to a relay: by its
// author, signed with the author's key.
func (in *instance) create(r *testRelay, n string) int {
	return in.post(r.url+"/inbox", map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams", "id": in.note(n) + "/activity", "type": "Create",
		"actor": in.user, "to": []string{public}, "cc": []string{in.user + "/followers"},
		"object": map[string]any{"id": in.note(n), "type": "Note", "attributedTo": in.user, "content": "hello " + n, "to": []string{public}},
	}, in.userS)
}

func (in *instance) delete(r *testRelay, n string) int {
	return in.post(r.url+"/inbox", map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams", "id": in.note(n) + "#delete", "type": "Delete",
		"actor": in.user, "to": []string{public},
		"object": map[string]any{"id": in.note(n), "type": "Tombstone"},
	}, in.userS)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func readCloser(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }
