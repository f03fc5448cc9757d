package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/examples/relay/internal/relay"
)

const testToken = "test-admin-token-0123456789"

// statusFixture: a subscribed, a LitePub subscriber that is down (so its
// host has failures and an open breaker), and a pending subscriber.
func statusFixture(t *testing.T) (*testRelay, *instance, *instance) {
	t.Helper()
	r := startRelay(t, "", "")
	a, down := newInstance(t, "a"), newInstance(t, "b")
	subscribe(t, r, a, public)
	subscribe(t, r, down, r.url+"/actor")
	down.mu.Lock()
	down.down = true
	down.mu.Unlock()
	for _, n := range []string{"s1", "s2", "s3"} {
		if a.create(r, n) != http.StatusAccepted {
			t.Fatal("Create refused")
		}
	}
	// Wait until the relay has seen the down host fail enough to open its breaker.
	deadline := time.Now().Add(10 * time.Second)
	for {
		hosts, _ := r.app.health.Snapshot()
		if len(hosts) > 0 && hosts[0].Breaker == relay.BreakerOpen {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("breaker never opened: %+v", hosts)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return r, a, down
}

func TestStatusJSON(t *testing.T) {
	r, _, down := statusFixture(t)
	get := func(auth string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, r.url+"/admin/status.json", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for name, auth := range map[string]string{"no token": "", "wrong token": "Bearer nope-nope-nope-nope"} {
		resp := get(auth)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d; want 401", name, resp.StatusCode)
		}
	}
	resp := get("Bearer " + testToken)
	defer resp.Body.Close()
	var rep relay.Report
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	if rep.Active != 2 || len(rep.Subscribers) != 2 {
		t.Errorf("subscribers: active %d, %d listed; want 2", rep.Active, len(rep.Subscribers))
	}
	if rep.Queue == nil || rep.Queue.Backend != "memory" {
		t.Errorf("queue = %+v; want the memory queue's depth", rep.Queue)
	}
	downHost := strings.TrimPrefix(down.srv.URL, "http://")
	if len(rep.Hosts) == 0 || rep.Hosts[0].Host != downHost || rep.Hosts[0].Breaker != relay.BreakerOpen {
		t.Errorf("hosts = %+v; want %s first with an open breaker", rep.Hosts, downHost)
	}
	saw503 := false
	for _, f := range rep.RecentFailures {
		saw503 = saw503 || (f.Status == http.StatusServiceUnavailable && f.Host == downHost)
	}
	if !saw503 {
		t.Errorf("recent failures = %+v; want the down host's 503s", rep.RecentFailures)
	}
	if len(rep.Directories) != 0 {
		t.Errorf("directories = %+v; want none configured", rep.Directories)
	}
}

// chromium finds headless Chromium, skipping locally (failing under CI) when
// it is missing.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is missing (apt-get install -y chromium)")
	}
	t.Skip("chromium not installed; apt-get install -y chromium to run the status page test")
	return ""
}

func TestStatusPageInChromium(t *testing.T) {
	bin := chromium(t)
	r, a, down := statusFixture(t)
	url := r.url + "/admin/status?token=" + testToken
	run := func(args ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
			"--no-first-run", "--user-data-dir=" + t.TempDir(), "--window-size=1280,1100"}
		out, err := exec.CommandContext(ctx, bin, append(append(base, args...), url)...).Output()
		if err != nil {
			t.Fatalf("chromium %v: %v", args, err)
		}
		return out
	}
	dom := string(run("--dump-dom"))
	for what, want := range map[string]string{
		"subscriber row a":     `class="subscriber" data-actor="` + a.actor + `"`,
		"subscriber row b":     `class="subscriber" data-actor="` + down.actor + `"`,
		"breaker row":          `class="host" data-host="` + strings.TrimPrefix(down.srv.URL, "http://") + `"`,
		"open breaker":         `<span class="pill open">open</span>`,
		"recent failure":       `class="failure"`,
		"queue card":           `id="card-queue"`,
		"directory empty note": "No Directory configured.",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered page lacks the %s (%s)", what, want)
		}
	}
	dir := filepath.Join("testdata", "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot, err := filepath.Abs(filepath.Join(dir, "status.png"))
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(shot)
	run("--screenshot=" + shot)
	b, err := os.ReadFile(shot)
	if err != nil || len(b) < 1000 || string(b[1:4]) != "PNG" {
		t.Fatalf("screenshot %s: %d bytes, %v", shot, len(b), err)
	}
	t.Logf("status page screenshot: %s", shot)
}

// TestMemoryDepth: the in-memory queue's depth is the MemoryQueue's own
// count per lane, claimed or not (a low-lane batch included, which the
// relay's tags alone could not place), and falls as jobs leave.
func TestMemoryDepth(t *testing.T) {
	r := startRelayOpts(t, "", "", false)
	d := r.app.deliverer
	ctx := context.Background()
	send := func(inboxes []string, b deliver.Batch) {
		t.Helper()
		if err := d.SendBatch(ctx, r.app.cfg.KeyID(), []byte(`{}`), inboxes, b); err != nil {
			t.Fatal(err)
		}
	}
	send([]string{"https://a.example/inbox"}, deliver.Batch{Tag: relay.TagAccept, Priority: true})
	send([]string{"https://a.example/inbox", "https://b.example/inbox"}, deliver.Batch{Tag: relay.TagRelay})
	send([]string{"https://c.example/inbox"}, deliver.Batch{Tag: "backfill", LowPriority: true})
	got, err := r.app.depth(ctx)
	if want := (relay.QueueDepth{Backend: "memory", Priority: 1, Normal: 2, Low: 1}); err != nil || got != want {
		t.Fatalf("depth = %+v, %v; want %+v", got, err, want)
	}
	if _, err := d.Drop(ctx, deliver.DropFilter{Tag: relay.TagRelay}); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.app.depth(ctx); got.Normal != 0 || got.Priority != 1 || got.Low != 1 {
		t.Fatalf("depth after dropping the relayed batch = %+v", got)
	}
}
