package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fedkit/fedkit/examples/relay/internal/config"
	"github.com/fedkit/fedkit/internal/pgtest"
)

// TestSeenSetShared: two server processes share the seen-set, in Redis or,
// without it, in Postgres, so one activity sent to both (a replay, another
// relay's reflection arriving at the other process) is relayed once.
func TestSeenSetShared(t *testing.T) {
	t.Run("redis", func(t *testing.T) { testSeenSetShared(t, sharedBackends(t)) })
	t.Run("postgres only", func(t *testing.T) { testSeenSetShared(t, fmt.Sprintf("POSTGRES_URL: %q\n", pgtest.ConnString(t))) })
}

func testSeenSetShared(t *testing.T, backends string) {
	r := startRelayOpts(t, "", backends, true)
	a, b := newInstance(t, "a"), newInstance(t, "b")
	subscribe(t, r, a, public)
	subscribe(t, r, b, public)

	cfg, err := config.Load(r.cfgPath, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, _, _ := testEnv(t)
	second, err := openApp(context.Background(), cfg, e, false) // its deliveries go to the shared queue
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.close)
	srv := httptest.NewServer(second.relay.Handler())
	t.Cleanup(srv.Close)

	for _, to := range []*testRelay{{url: srv.URL}, r} {
		if code := a.create(to, "1"); code != http.StatusAccepted {
			t.Fatalf("Create to %s = %d", to.url, code)
		}
	}
	b.waitFor("the post", is("Create", a.note("1")))
	waitUntil(t, "an empty queue", func() bool {
		d, err := r.app.depth(context.Background())
		return err == nil && d.Total() == 0
	})
	if n := b.count(is("Create", a.note("1"))); n != 1 {
		t.Fatalf("the post arrived %d times; want once", n)
	}
}
