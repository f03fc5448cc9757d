package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/examples/relay/internal/relay"
	"github.com/fedkit/fedkit/internal/redistest"
)

// With its Redis killed -9, the relay's status page (HTML and JSON) still
// answers 200 with everything it can read (the subscribers) and names the
// two sections Redis holds as unavailable, rather than failing as a whole;
// once Redis is back the sections return.
func TestStatusPageDuringRedisOutage(t *testing.T) {
	srv := redistest.Server(t)
	r := startRelay(t, "", fmt.Sprintf("REDIS_URL: %q\nDIRECTORIES:\n  - origin: https://directory.example\n    enabled: false\n", srv.URL))
	a := newInstance(t, "a")
	subscribe(t, r, a, public)
	get := func(path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, r.url+path, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	report := func() relay.Report {
		t.Helper()
		code, body := get("/admin/status.json")
		var rep relay.Report
		if err := json.Unmarshal([]byte(body), &rep); code != http.StatusOK || err != nil {
			t.Fatalf("status.json = %d, %v:\n%s", code, err, body)
		}
		return rep
	}
	// Redis holds the breakers, the hosts' availability and the Directory state.
	unavailable := []string{"breakers: store unavailable", "availability: store unavailable", "directories: state unavailable"}

	if rep := report(); len(rep.Errors) != 0 || len(rep.Directories) != 1 {
		t.Fatalf("with Redis up: errors %q, %d directories; want none and one", rep.Errors, len(rep.Directories))
	}

	srv.Kill()
	rep := report()
	if !slices.Equal(rep.Errors, unavailable) {
		t.Fatalf("with Redis away: errors %q, want %q", rep.Errors, unavailable)
	}
	if rep.Active != 1 || len(rep.Subscribers) != 1 || rep.BreakerStore != "redis" {
		t.Fatalf("with Redis away: %d active, %d subscribers, breaker store %q; want the rest of the page", rep.Active, len(rep.Subscribers), rep.BreakerStore)
	}
	code, html := get("/admin/status")
	if code != http.StatusOK {
		t.Fatalf("status page with Redis away = %d, want 200:\n%s", code, html)
	}
	for _, want := range unavailable {
		if !strings.Contains(html, `<p class="err">`+want+`</p>`) {
			t.Errorf("status page with Redis away does not say %q", want)
		}
	}
	if !strings.Contains(html, a.actor) {
		t.Error("status page with Redis away lost its subscribers")
	}

	// The client's pooled connections died with the server: the first
	// reads after the restart may still fail while the pool redials.
	redistest.Restart(t, srv)
	waitUntil(t, "the Redis sections back on the status page", func() bool {
		rep := report()
		return len(rep.Errors) == 0 && len(rep.Directories) == 1
	})
}
