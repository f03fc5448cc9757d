package directory_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/directorytest"
)

const (
	schedActor  = "https://relay.example/actor"
	schedBase   = "https://relay.example"
	schedOrigin = directorytest.OriginDefault
)

// schedEnv is a relay, a fake Directory, a store and a config file.
type schedEnv struct {
	t      *testing.T
	srv    *directorytest.Server
	client *directory.Client
	lc     *countingLifecycle
	store  directory.StateStore
	config string
}

const schedYAML = `# relay config
DIRECTORIES:
  - origin: https://directory.example
    enabled: true
DIRECTORY_SCHEDULER_ENABLED: true
`

// newSchedEnv builds the environment; call it inside a synctest bubble when
// the test needs fake time, so every clock agrees.
func newSchedEnv(t *testing.T, store directory.StateStore, profile directory.Profile) *schedEnv {
	t.Helper()
	key := testKey(t)
	srv := directorytest.New(&directorytest.Config{EnrollmentOpen: true, ActorRateBurst: 1000, ActorRateRefill: time.Second})
	srv.AddKey(schedActor+"#main-key", &key.PublicKey)
	cl, err := directory.New(key, &directory.Config{
		Actor: schedActor, PublicBaseURL: schedBase,
		Directories: []directory.Entry{{Origin: schedOrigin, Enabled: true}},
		Profile:     profile,
		HTTP:        srv.Doer(),
		Backoff:     time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "config.yml")
	if err := os.WriteFile(cfg, []byte(schedYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	if store == nil {
		store = &directory.MemoryStateStore{}
	}
	return &schedEnv{t: t, srv: srv, client: cl, lc: &countingLifecycle{Lifecycle: cl}, store: store, config: cfg}
}

func (e *schedEnv) scheduler(cfg *directory.SchedulerConfig) *directory.Scheduler {
	e.t.Helper()
	c := directory.SchedulerConfig{ConfigFile: e.config, Relay: schedActor}
	if cfg != nil {
		c = *cfg
		c.ConfigFile, c.Relay = e.config, schedActor
	}
	s, err := directory.NewScheduler(e.lc, e.store, &c)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func (e *schedEnv) record() directory.StateRecord {
	e.t.Helper()
	r, err := e.store.Load(context.Background(), schedOrigin)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// seed writes rec as if a previous process had.
func (e *schedEnv) seed(rec directory.StateRecord) {
	e.t.Helper()
	ctx := context.Background()
	tok, err := e.store.Acquire(ctx, schedOrigin, time.Minute)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.Save(ctx, schedOrigin, tok, rec); err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.Release(ctx, schedOrigin, tok); err != nil {
		e.t.Fatal(err)
	}
}

// ops lists the lifecycle requests the fake Directory saw, as "v3 register".
func (e *schedEnv) ops() []string {
	var out []string
	for _, r := range e.srv.Requests() {
		out = append(out, r.Version.String()+" "+string(r.Operation))
	}
	return out
}

func (e *schedEnv) writeConfig(s string) {
	e.t.Helper()
	if err := os.WriteFile(e.config, []byte(s), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// countingLifecycle lets a test override the profile digest and intercept
// calls.
type countingLifecycle struct {
	directory.Lifecycle
	mu     sync.Mutex
	digest string
	before func(ctx context.Context, op string) error
}

func (c *countingLifecycle) ProfileDigest() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.digest != "" {
		return c.digest
	}
	return c.Lifecycle.ProfileDigest()
}

func (c *countingLifecycle) setDigest(d string) { c.mu.Lock(); c.digest = d; c.mu.Unlock() }

func (c *countingLifecycle) hook(ctx context.Context, op string) error {
	c.mu.Lock()
	f := c.before
	c.mu.Unlock()
	if f != nil {
		return f(ctx, op)
	}
	return nil
}

func (c *countingLifecycle) Register(ctx context.Context, origin string, o *directory.CallOpts) (*directory.Result, error) {
	if err := c.hook(ctx, "register"); err != nil {
		return nil, err
	}
	return c.Lifecycle.Register(ctx, origin, o)
}

func (c *countingLifecycle) Heartbeat(ctx context.Context, origin string, o *directory.CallOpts) (*directory.Result, error) {
	if err := c.hook(ctx, "heartbeat"); err != nil {
		return nil, err
	}
	return c.Lifecycle.Heartbeat(ctx, origin, o)
}

func (c *countingLifecycle) Unregister(ctx context.Context, origin string, o *directory.CallOpts) (*directory.Result, error) {
	if err := c.hook(ctx, "unregister"); err != nil {
		return nil, err
	}
	return c.Lifecycle.Unregister(ctx, origin, o)
}

// preRegister registers the relay directly, as an earlier run would have.
func (e *schedEnv) preRegister() {
	e.t.Helper()
	if _, err := e.client.Register(context.Background(), schedOrigin, nil); err != nil {
		e.t.Fatal(err)
	}
}

// SetDirectories forwards to the client, so the scheduler can keep it in
// step with the file.
func (c *countingLifecycle) SetDirectories(es []directory.Entry) error {
	return c.Lifecycle.(interface{ SetDirectories([]directory.Entry) error }).SetDirectories(es)
}

// SetProfile forwards to the client, so the scheduler can apply the file's
// profile.
func (c *countingLifecycle) SetProfile(p directory.Profile) error {
	return c.Lifecycle.(interface{ SetProfile(directory.Profile) error }).SetProfile(p)
}
