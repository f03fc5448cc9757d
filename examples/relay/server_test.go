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

// TestServerLifecycle runs `relay server` as main does: it serves, runs the
// Directory scheduler (which registers at startup with the active
// subscriber count), and stops cleanly when its context ends (SIGTERM).
func TestServerLifecycle(t *testing.T) {
	key := testKey(t, "relay")
	d := directorytest.New(&directorytest.Config{EnrollmentOpen: true,
		Keys: map[string]crypto.PublicKey{relayActor + "#main-key": key.Public()}})
	dir := t.TempDir()
	pemBytes, _ := os.ReadFile(filepath.Join("testdata", "keys", "relay.pem"))
	if err := os.WriteFile(filepath.Join(dir, "actor.pem"), pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "config.yml")
	y := fmt.Sprintf("PUBLIC_URL: https://relay.example\nLISTEN: 127.0.0.1:0\nDATA_DIR: .\nADMIN_TOKEN: %s\n"+
		"DIRECTORIES:\n  - origin: %s\n    enabled: true\nDIRECTORY_SCHEDULER_ENABLED: true\n", testToken, d.Origin())
	if err := os.WriteFile(cfgPath, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	e, _, errb := testEnv(t)
	e.directoryHTTP = d.Doer()
	addrc := make(chan string, 1)
	e.ready = func(addr string, _ *app) { addrc <- addr }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exit := make(chan int, 1)
	go func() { exit <- run(ctx, []string{"-c", cfgPath}, e) }()
	var addr string
	select {
	case addr = <-addrc:
	case code := <-exit:
		t.Fatalf("server exited %d:\n%s", code, errb)
	}
	resp, err := http.Get("http://" + addr + "/actor")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/activity+json") {
		t.Fatalf("GET /actor: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if reg, ok := d.Registration(relayActor); ok && reg.Active {
			if reg.Telemetry != 0 {
				t.Errorf("telemetry = %d; want 0 subscribers", reg.Telemetry)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the scheduler never registered:\n%s", errb)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case code := <-exit:
		if code != exitOK {
			t.Fatalf("exit %d after shutdown:\n%s", code, errb)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("server did not stop")
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

// TestPostgresPendingSurviveRestart: a server queues an Accept in Postgres
// and stops before delivering it; a worker started afterwards (another
// process in production) delivers it. Redis holds the breakers.
func TestPostgresPendingSurviveRestart(t *testing.T) {
	pg := pgtest.ConnString(t)
	_, prefix := redistest.Client(t)
	ro := redistest.Options(t)
	extra := fmt.Sprintf("POSTGRES_URL: %q\nREDIS_URL: \"redis://%s/%d\"\nREDIS_PREFIX: %q\n", pg, ro.Addr, ro.DB, prefix)
	r := startRelayOpts(t, "", extra, false)
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
	ready := make(chan *app, 1)
	e.ready = func(_ string, ap *app) { ready <- ap }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exit := make(chan int, 1)
	go func() { exit <- run(ctx, []string{"-c", r.cfgPath, "worker"}, e) }()
	var w *app
	select {
	case w = <-ready:
	case code := <-exit:
		t.Fatalf("worker exited %d:\n%s", code, errb)
	}
	acc := a.waitFor("the Accept queued before the restart", is("Accept", followID))
	checkRelaySigned(t, r, acc)
	if sub, ok, err := w.store.Get(context.Background(), a.actor); err != nil || !ok {
		t.Fatalf("subscriber not in Postgres: %+v %v %v", sub, ok, err)
	}
	cancel()
	if code := <-exit; code != exitOK {
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
	dir := t.TempDir()
	pemBytes, _ := os.ReadFile(filepath.Join("testdata", "keys", "relay.pem"))
	if err := os.WriteFile(filepath.Join(dir, "actor.pem"), pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "config.yml")
	y := fmt.Sprintf("PUBLIC_URL: http://%s\nLISTEN: %s\nDATA_DIR: .\n", addr, addr)
	if err := os.WriteFile(cfgPath, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	e, _, errb := testEnv(t)
	ready := make(chan struct{})
	var relayApp *app
	e.ready = func(_ string, ap *app) { relayApp = ap; close(ready) }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exit := make(chan int, 1)
	go func() { exit <- run(ctx, []string{"-c", cfgPath}, e) }()
	select {
	case <-ready:
	case code := <-exit:
		t.Fatalf("server exited %d:\n%s", code, errb)
	}
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
	cancel() // SIGTERM while the Accept is in flight
	select {
	case code := <-exit:
		if code != exitOK {
			t.Fatalf("exit %d:\n%s", code, errb)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("server did not stop")
	}
	// The relay saw the inbox accept it: the attempt was not cut off.
	hosts, _ := relayApp.health.Snapshot()
	if len(hosts) != 1 || hosts[0].Delivered != 1 || a.count(is("Accept", followID)) != 1 {
		t.Fatalf("the in-flight Accept was cut off: hosts %+v, received %v", hosts, a.types())
	}
}

// TestSchedulerSharesRedisState: the server's scheduler registers and keeps
// its state in Redis, where the status page and the one-off directory
// commands (other processes in production) read it.
func TestSchedulerSharesRedisState(t *testing.T) {
	key := testKey(t, "relay")
	d := directorytest.New(&directorytest.Config{EnrollmentOpen: true,
		Keys: map[string]crypto.PublicKey{relayActor + "#main-key": key.Public()}})
	_, prefix := redistest.Client(t)
	ro := redistest.Options(t)
	dir := t.TempDir()
	pemBytes, _ := os.ReadFile(filepath.Join("testdata", "keys", "relay.pem"))
	if err := os.WriteFile(filepath.Join(dir, "actor.pem"), pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "config.yml")
	y := fmt.Sprintf("PUBLIC_URL: https://relay.example\nLISTEN: 127.0.0.1:0\nDATA_DIR: .\nADMIN_TOKEN: %s\n"+
		"REDIS_URL: \"redis://%s/%d\"\nREDIS_PREFIX: %q\n"+
		"DIRECTORIES:\n  - origin: %s\n    enabled: true\nDIRECTORY_SCHEDULER_ENABLED: true\n", testToken, ro.Addr, ro.DB, prefix, d.Origin())
	if err := os.WriteFile(cfgPath, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := func(args ...string) (int, string) {
		e, out, errb := testEnv(t)
		e.directoryHTTP = d.Doer()
		code := run(context.Background(), append([]string{"-c", cfgPath}, args...), e)
		t.Logf("relay %v -> %d\n%s%s", args, code, out, errb)
		return code, out.String()
	}

	e, _, errb := testEnv(t)
	e.directoryHTTP = d.Doer()
	addrc := make(chan string, 1)
	e.ready = func(addr string, _ *app) { addrc <- addr }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exit := make(chan int, 1)
	go func() { exit <- run(ctx, []string{"-c", cfgPath}, e) }()
	var addr string
	select {
	case addr = <-addrc:
	case code := <-exit:
		t.Fatalf("server exited %d:\n%s", code, errb)
	}
	deadline := time.Now().Add(10 * time.Second)
	var state string
	for {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/admin/status.json", nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Directories []struct{ Origin, State string }
		}
		_ = json.NewDecoder(resp.Body).Decode(&rep)
		resp.Body.Close()
		if len(rep.Directories) == 1 {
			state = rep.Directories[0].State
		}
		if state == "registered" || state == "heartbeat-current" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status page never showed a registration (last state %q):\n%s", state, errb)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code, out := cmd("directory", "status"); code != exitOK || !strings.Contains(out, "Redis state") || !strings.Contains(out, state) {
		t.Fatalf("directory status does not show the scheduler's state %q", state)
	}
	cancel()
	if code := <-exit; code != exitOK {
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

// TestServerAndTwoWorkers: an API process that does not deliver, and two
// workers sharing its Postgres queue and Redis breakers; every delivery
// arrives exactly once.
func TestServerAndTwoWorkers(t *testing.T) {
	pg := pgtest.ConnString(t)
	_, prefix := redistest.Client(t)
	ro := redistest.Options(t)
	extra := fmt.Sprintf("POSTGRES_URL: %q\nREDIS_URL: \"redis://%s/%d\"\nREDIS_PREFIX: %q\n", pg, ro.Addr, ro.DB, prefix)
	r := startRelayOpts(t, "", extra, false)
	ctx, cancel := context.WithCancel(context.Background())
	exits := make(chan int, 2)
	for range 2 {
		e, _, _ := testEnv(t)
		go func() { exits <- run(ctx, []string{"-c", r.cfgPath, "worker"}, e) }()
	}
	defer func() {
		cancel()
		for range 2 {
			if code := <-exits; code != exitOK {
				t.Errorf("worker exit %d", code)
			}
		}
	}()
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
	time.Sleep(100 * time.Millisecond) // room for a duplicate to show up
	for i := range 5 {
		if n := b.count(is("Create", a.note(fmt.Sprint(i)))); n != 1 {
			t.Errorf("post %d arrived %d times", i, n)
		}
	}
}
