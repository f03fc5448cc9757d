package main

import (
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/directory/directorytest"
	"github.com/fedkit/fedkit/internal/pgtest"
	"github.com/fedkit/fedkit/internal/redistest"
)

// fakeDirectory is a Directory that knows the relay's test key.
func fakeDirectory(t *testing.T) *directorytest.Server {
	t.Helper()
	return directorytest.New(&directorytest.Config{EnrollmentOpen: true,
		Keys: map[string]crypto.PublicKey{relayActor + "#main-key": testKey(t, "relay").Public()}})
}

// schedulerYAML enables d and the scheduler for the relay at relayActor.
func schedulerYAML(d *directorytest.Server) string {
	return fmt.Sprintf("PUBLIC_URL: https://relay.example\nLISTEN: 127.0.0.1:0\nDATA_DIR: .\nADMIN_TOKEN: %s\n"+
		"DIRECTORIES:\n  - origin: %s\n    enabled: true\nDIRECTORY_SCHEDULER_ENABLED: true\n", testToken, d.Origin())
}

// waitUntil polls cond until it holds, failing the test after 10 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServerLifecycle runs `relay server` as main does: it serves, runs the
// Directory scheduler (which registers at startup with the active
// subscriber count), and stops cleanly when its context ends (SIGTERM).
func TestServerLifecycle(t *testing.T) {
	d := fakeDirectory(t)
	cfgPath := serverConfig(t, schedulerYAML(d))
	e, _, errb := testEnv(t)
	e.directoryHTTP = d.Doer()
	p := startProcess(t, e, errb, "-c", cfgPath)
	resp, err := http.Get("http://" + p.addr + "/actor")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/activity+json") {
		t.Fatalf("GET /actor: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	waitUntil(t, "the scheduler's registration", func() bool { reg, ok := d.Registration(relayActor); return ok && reg.Active })
	if reg, _ := d.Registration(relayActor); reg.Telemetry != 0 {
		t.Errorf("telemetry = %d; want 0 subscribers", reg.Telemetry)
	}
	if code := p.stop(t); code != exitOK {
		t.Fatalf("exit %d after shutdown:\n%s", code, errb)
	}
}

func TestWorkerNeedsPostgres(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.yml")
	if err := os.WriteFile(p, []byte("LISTEN: 127.0.0.1:0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e, _, errb := testEnv(t)
	if code := run(context.Background(), []string{"-c", p, "worker"}, e); code != exitConfig || !strings.Contains(errb.String(), "POSTGRES_URL") {
		t.Fatalf("exit %d:\n%s", code, errb)
	}
}

// sharedBackends is the YAML naming a fresh Postgres schema and Redis prefix.
func sharedBackends(t *testing.T) string {
	pg := pgtest.ConnString(t)
	_, prefix := redistest.Client(t)
	ro := redistest.Options(t)
	return fmt.Sprintf("POSTGRES_URL: %q\nREDIS_URL: \"redis://%s/%d\"\nREDIS_PREFIX: %q\n", pg, ro.Addr, ro.DB, prefix)
}

// TestPostgresPendingSurviveRestart: a server queues an Accept in Postgres
// and stops before delivering it; a worker started afterwards (another
// process in production) delivers it. Redis holds the breakers.
func TestPostgresPendingSurviveRestart(t *testing.T) {
	r := startRelayOpts(t, "", sharedBackends(t), false)
	a := newInstance(t, "a")
	code, followID := a.follow(r, public)
	if code != http.StatusAccepted {
		t.Fatalf("Follow = %d", code)
	}
	depth, err := r.app.depth(context.Background())
	if err != nil || depth.Backend != "postgres" || depth.Priority != 1 {
		t.Fatalf("queue depth = %+v, %v; want the Accept waiting in the priority lane", depth, err)
	}
	// The server's delivery side stops; its HTTP side keeps serving the
	// actor, which the instance needs to check the relay's signature.
	r.app.close()

	e, _, errb := testEnv(t)
	w := startProcess(t, e, errb, "-c", r.cfgPath, "worker")
	acc := a.waitFor("the Accept queued before the restart", is("Accept", followID))
	checkRelaySigned(t, r, acc)
	if sub, ok, err := w.app.store.Get(context.Background(), a.actor); err != nil || !ok {
		t.Fatalf("subscriber not in Postgres: %+v %v %v", sub, ok, err)
	}
	if code := w.stop(t); code != exitOK {
		t.Fatalf("worker exit %d:\n%s", code, errb)
	}
}

// TestGracefulShutdown: a delivery in flight when SIGTERM comes is finished
// before the server exits.
func TestGracefulShutdown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // the relay needs to know its public URL before it listens
	cfgPath := serverConfig(t, fmt.Sprintf("PUBLIC_URL: http://%s\nLISTEN: %s\nDATA_DIR: .\n", addr, addr))
	e, _, errb := testEnv(t)
	p := startProcess(t, e, errb, "-c", cfgPath)
	a := newInstance(t, "a")
	a.mu.Lock()
	a.delay, a.started = 300*time.Millisecond, make(chan struct{}, 1)
	a.mu.Unlock()
	code, followID := a.follow(&testRelay{url: "http://" + addr}, public)
	if code != http.StatusAccepted {
		t.Fatalf("Follow = %d", code)
	}
	select {
	case <-a.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the Accept never started arriving")
	}
	if code := p.stop(t); code != exitOK { // SIGTERM while the Accept is in flight
		t.Fatalf("exit %d:\n%s", code, errb)
	}
	// The relay saw the inbox accept it: the attempt was not cut off.
	hosts, _ := p.app.health.Snapshot()
	if len(hosts) != 1 || hosts[0].Delivered != 1 || a.count(is("Accept", followID)) != 1 {
		t.Fatalf("the in-flight Accept was cut off: hosts %+v, received %v", hosts, a.types())
	}
}

// TestSchedulerSharesRedisState: the server's scheduler registers and keeps
// its state in Redis, where the status page and the one-off directory
// commands (other processes in production) read it.
func TestSchedulerSharesRedisState(t *testing.T) {
	d := fakeDirectory(t)
	_, prefix := redistest.Client(t)
	ro := redistest.Options(t)
	cfgPath := serverConfig(t, schedulerYAML(d)+fmt.Sprintf("REDIS_URL: \"redis://%s/%d\"\nREDIS_PREFIX: %q\n", ro.Addr, ro.DB, prefix))
	cmd := func(args ...string) (int, string) {
		e, out, errb := testEnv(t)
		e.directoryHTTP = d.Doer()
		code := run(context.Background(), append([]string{"-c", cfgPath}, args...), e)
		t.Logf("relay %v -> %d\n%s%s", args, code, out, errb)
		return code, out.String()
	}

	e, _, errb := testEnv(t)
	e.directoryHTTP = d.Doer()
	p := startProcess(t, e, errb, "-c", cfgPath)
	var state string
	waitUntil(t, "a registration on the status page", func() bool {
		req, _ := http.NewRequest(http.MethodGet, "http://"+p.addr+"/admin/status.json", nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var rep struct {
			Directories []struct{ Origin, State string }
		}
		_ = json.NewDecoder(resp.Body).Decode(&rep)
		if len(rep.Directories) == 1 {
			state = rep.Directories[0].State
		}
		return state == "registered" || state == "heartbeat-current"
	})
	if code, out := cmd("directory", "status"); code != exitOK || !strings.Contains(out, "Redis state") || !strings.Contains(out, state) {
		t.Fatalf("directory status does not show the scheduler's state %q", state)
	}
	if code := p.stop(t); code != exitOK {
		t.Fatalf("server exit %d:\n%s", code, errb)
	}
	// With the server gone its lease is released: a manual heartbeat takes
	// the lease and records its success.
	before, _ := d.Registration(relayActor)
	if code, _ := cmd("directory", "heartbeat", d.Origin()); code != exitOK {
		t.Fatalf("heartbeat after shutdown: exit %d", code)
	}
	if after, _ := d.Registration(relayActor); after.Heartbeats != before.Heartbeats+1 {
		t.Fatalf("heartbeats %d -> %d", before.Heartbeats, after.Heartbeats)
	}
}

// refuseDoer fails the test on any Directory request.
type refuseDoer struct{ t *testing.T }

func (d refuseDoer) Do(r *http.Request) (*http.Response, error) {
	d.t.Errorf("a worker sent a Directory request: %s %s", r.Method, r.URL)
	return nil, fmt.Errorf("refused")
}

// TestWorkerNeverSchedules: with the scheduler enabled in the shared
// configuration, a worker sends the Directory nothing while a server
// started after it registers.
func TestWorkerNeverSchedules(t *testing.T) {
	d := fakeDirectory(t)
	cfgPath := serverConfig(t, schedulerYAML(d)+sharedBackends(t))
	we, _, werrb := testEnv(t)
	we.directoryHTTP = refuseDoer{t}
	startProcess(t, we, werrb, "-c", cfgPath, "worker")
	se, _, serrb := testEnv(t)
	se.directoryHTTP = d.Doer()
	startProcess(t, se, serrb, "-c", cfgPath, "server")
	waitUntil(t, "the server's registration", func() bool { reg, ok := d.Registration(relayActor); return ok && reg.Active })
}

// TestServerAndTwoWorkers: an API process that does not deliver, and two
// workers sharing its Postgres queue and Redis breakers; every delivery
// arrives exactly once.
func TestServerAndTwoWorkers(t *testing.T) {
	r := startRelayOpts(t, "", sharedBackends(t), false)
	for range 2 {
		e, _, errb := testEnv(t)
		startProcess(t, e, errb, "-c", r.cfgPath, "worker")
	}
	a, b := newInstance(t, "a"), newInstance(t, "b")
	subscribe(t, r, a, public)
	subscribe(t, r, b, public)
	for i := range 5 {
		if a.create(r, fmt.Sprint(i)) != http.StatusAccepted {
			t.Fatal("Create refused")
		}
	}
	for i := range 5 {
		b.waitFor("post "+fmt.Sprint(i), is("Create", a.note(fmt.Sprint(i))))
	}
	// Once the queue is empty no job is left to arrive twice.
	waitUntil(t, "an empty queue", func() bool {
		d, err := r.app.depth(context.Background())
		return err == nil && d.Total() == 0
	})
	for i := range 5 {
		if n := b.count(is("Create", a.note(fmt.Sprint(i)))); n != 1 {
			t.Errorf("post %d arrived %d times", i, n)
		}
	}
}
