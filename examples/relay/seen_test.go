package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fedkit/fedkit/examples/relay/internal/config"
)

// TestSeenSetSharedThroughRedis: with REDIS_URL, two server processes share
// the seen-set, so one activity sent to both (a replay, another relay's
// reflection arriving at the other process) is relayed once.
func TestSeenSetSharedThroughRedis(t *testing.T) {
	r := startRelayOpts(t, "", sharedBackends(t), true)
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
