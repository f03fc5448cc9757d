package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/redisbreaker"
	"github.com/fedkit/fedkit/examples/relay/internal/relay"
	"github.com/fedkit/fedkit/internal/redistest"
)

const testToken = "test-admin-token-0123456789"

// elsewhere is a host this relay process never delivers to; its light is
// opened in the breaker store directly, as another process sharing the
// store would, so only a page that reads the store can show it.
const elsewhere = "elsewhere.example"

// openLight records failures for light in store until it opens, as a
// deliverer with a threshold of 3 and an hour's cool-off would.
func openLight(t *testing.T, store driver.BreakerStore, light string) {
	t.Helper()
	rule := driver.BreakerRule{Threshold: 3, CoolOff: time.Hour}
	for range rule.Threshold {
		if err := store.Record(context.Background(), light, false, false, time.Now(), rule); err != nil {
			t.Fatal(err)
		}
	}
}

// storeLight reads light's row as the status page does.
func storeLight(t *testing.T, rep *relay.Report, light string) (relay.BreakerRow, bool) {
	t.Helper()
	for _, b := range rep.Breakers {
		if b.Light == light {
			return b, true
		}
	}
	return relay.BreakerRow{}, false
}

// statusFixture: a subscribed, a LitePub subscriber that is down (so its
// host has failures and its light in the breaker store is open), and a
// light opened in the store by "another process".
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
	// Wait until the down host has failed enough to open its light in the
	// deliverer's breaker store.
	downHost := strings.TrimPrefix(down.srv.URL, "http://")
	deadline := time.Now().Add(10 * time.Second)
	for {
		rep := r.app.relay.Report(context.Background())
		if b, ok := storeLight(t, rep, downHost); ok && b.State == relay.BreakerOpen {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the down host's breaker never opened in the store: %+v", rep.Breakers)
		}
		time.Sleep(10 * time.Millisecond)
	}
	openLight(t, r.app.breakers.(relay.MemoryLights).Store, elsewhere)
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
	if rep.BreakerStore != "memory" {
		t.Errorf("breaker_store = %q; want memory", rep.BreakerStore)
	}
	for _, light := range []string{downHost, elsewhere} {
		b, ok := storeLight(t, &rep, light)
		if !ok || b.State != relay.BreakerOpen || !b.OpenUntil.After(rep.GeneratedAt) {
			t.Errorf("breaker %s = %+v (listed %v); want open, until after %v", light, b, ok, rep.GeneratedAt)
		}
	}
	if len(rep.Breakers) != 2 {
		t.Errorf("breakers = %+v; want the two open lights only (a closed light is forgotten)", rep.Breakers)
	}
	// This process's own view lists the down host, which it delivered to,
	// and not the light another process opened.
	if len(rep.Hosts) == 0 || rep.Hosts[0].Host != downHost {
		t.Errorf("hosts = %+v; want %s first", rep.Hosts, downHost)
	}
	for _, h := range rep.Hosts {
		if h.Host == elsewhere {
			t.Errorf("hosts = %+v; %s was never delivered to by this process", rep.Hosts, elsewhere)
		}
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
	// The last hour per minute, ending now, with this process's attempts.
	per := rep.DeliveriesPerMinute
	if len(per) != relay.TimelineMinutes || !per[len(per)-1].Start.Equal(rep.GeneratedAt.Truncate(time.Minute)) {
		t.Fatalf("deliveries_per_minute: %d minutes, last %v; want %d ending at %v", len(per), per[len(per)-1].Start, relay.TimelineMinutes, rep.GeneratedAt)
	}
	var delivered, failed int
	for _, m := range per {
		delivered, failed = delivered+m.Delivered, failed+m.Failed
	}
	if delivered == 0 || failed == 0 {
		t.Errorf("deliveries_per_minute adds up to %d delivered, %d failed; want the Accepts and the down host's failures", delivered, failed)
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
		"down host's breaker":  `<tr class="breaker" data-light="` + strings.TrimPrefix(down.srv.URL, "http://") + `">`,
		"other's breaker":      `<tr class="breaker" data-light="` + elsewhere + `">`,
		"open breaker":         `<span class="pill open">open</span>`,
		"breaker store":        "(memory store)",
		"this process's row":   `class="host" data-host="` + strings.TrimPrefix(down.srv.URL, "http://") + `"`,
		"recent failure":       `class="failure"`,
		"queue card":           `id="card-queue"`,
		"directory empty note": "No Directory configured.",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered page lacks the %s (%s)", what, want)
		}
	}
	// The deliveries-per-minute chart: an inline SVG with a bar for this
	// process's deliveries (the Accepts) and for its failures (the down
	// host), whose counts add up to the legend's totals.
	if !strings.Contains(dom, `<svg id="deliveries-chart"`) {
		t.Error("rendered page lacks the deliveries chart")
	}
	for _, class := range []string{"delivered", "failed"} {
		bars := regexp.MustCompile(`<rect class="bar `+class+`" data-minute="[0-9]{2}:[0-9]{2}" data-count="([0-9]+)"`).FindAllStringSubmatch(dom, -1)
		sum := 0
		for _, b := range bars {
			n, _ := strconv.Atoi(b[1])
			sum += n
		}
		total := regexp.MustCompile(`<b id="total-` + class + `">([0-9]+)</b>`).FindStringSubmatch(dom)
		if len(bars) == 0 || sum == 0 || total == nil || total[1] != strconv.Itoa(sum) {
			t.Errorf("chart: %d %s bars adding up to %d, legend %v; want at least one, agreeing", len(bars), class, sum, total)
		}
	}
	// Each light's own row says open, not just some pill on the page.
	for _, light := range []string{strings.TrimPrefix(down.srv.URL, "http://"), elsewhere} {
		start := strings.Index(dom, `<tr class="breaker" data-light="`+light+`">`)
		if start < 0 {
			continue // reported above
		}
		row, _, _ := strings.Cut(dom[start:], "</tr>")
		if !strings.Contains(row, `<span class="pill open">open</span>`) {
			t.Errorf("breaker row for %s does not say open: %s", light, row)
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
	send([]string{"https://a.example/inbox"}, deliver.Batch{Tag: relay.TagAccept, Lane: driver.LanePriority})
	send([]string{"https://a.example/inbox", "https://b.example/inbox"}, deliver.Batch{Tag: relay.TagRelay})
	send([]string{"https://c.example/inbox"}, deliver.Batch{Tag: "backfill", Lane: driver.LaneLow})
	got, err := r.app.depth(ctx)
	if want := (relay.QueueDepth{Backend: "memory", Priority: 1, Normal: 2, Low: 1}); err != nil || got != want {
		t.Fatalf("depth = %+v, %v; want %+v", got, err, want)
	}
	if _, err := d.Drop(ctx, driver.DropFilter{Tag: relay.TagRelay}); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.app.depth(ctx); got.Normal != 0 || got.Priority != 1 || got.Low != 1 {
		t.Fatalf("depth after dropping the relayed batch = %+v", got)
	}
}

// TestStatusBreakersFromRedis: with REDIS_URL, a light another process
// opened in the shared store shows as open on this process's status page,
// though this process never delivered to that host.
func TestStatusBreakersFromRedis(t *testing.T) {
	rdb, prefix := redistest.Client(t)
	ro := redistest.Options(t)
	r := startRelayOpts(t, "", fmt.Sprintf("REDIS_URL: \"redis://%s/%d\"\nREDIS_PREFIX: %q\n", ro.Addr, ro.DB, prefix), false)
	// Another process: its own Store on the relay's Redis prefix.
	openLight(t, redisbreaker.New(rdb, &redisbreaker.Config{KeyPrefix: prefix + "breaker:"}), elsewhere)
	rep := r.app.relay.Report(context.Background())
	b, ok := storeLight(t, rep, elsewhere)
	if rep.BreakerStore != "redis" || !ok || b.State != relay.BreakerOpen || !b.OpenUntil.After(rep.GeneratedAt) {
		t.Fatalf("breakers from %q = %+v; want %s open", rep.BreakerStore, rep.Breakers, elsewhere)
	}
	if len(rep.Hosts) != 0 {
		t.Errorf("hosts = %+v; this process delivered nothing", rep.Hosts)
	}
}
