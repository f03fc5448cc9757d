package main

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/deliver/redisbreaker"
	"github.com/fedkit/fedkit/examples/relay/internal/relay"
	"github.com/fedkit/fedkit/internal/redistest"
)

// With REDIS_URL naming the three masters of a Redis Cluster, the relay
// runs on a cluster client: it delivers through breakers kept in the
// cluster, its status page reads the lights another process opened there
// and the Directory state, with no section unavailable.
func TestRelayOnRedisCluster(t *testing.T) {
	cl, c, prefix := redistest.Cluster(t)
	url := fmt.Sprintf("redis://%s?addr=%s&addr=%s", cl.Addrs[0], cl.Addrs[1], cl.Addrs[2])
	r := startRelay(t, "", fmt.Sprintf("REDIS_URL: %q\nREDIS_PREFIX: %q\nDIRECTORIES:\n  - origin: https://directory.example\n    enabled: false\n", url, prefix))
	if _, ok := r.app.rdb.(*redis.ClusterClient); !ok {
		t.Fatalf("REDIS_URL with addr parameters gave a %T, want a cluster client", r.app.rdb)
	}
	a, b := newInstance(t, "a"), newInstance(t, "b")
	subscribe(t, r, a, public)
	subscribe(t, r, b, public)
	if a.create(r, "n1") != http.StatusAccepted {
		t.Fatal("Create refused")
	}
	b.waitFor("the relayed Create", is("Create", a.note("n1")))

	openLight(t, redisbreaker.New(c, &redisbreaker.Config{KeyPrefix: prefix + "breaker:"}), elsewhere)
	rep := r.app.relay.Report(context.Background())
	if len(rep.Errors) != 0 || len(rep.Directories) != 1 {
		t.Fatalf("status on the cluster: errors %q, %d directories; want none and one", rep.Errors, len(rep.Directories))
	}
	if l, ok := storeLight(t, rep, elsewhere); !ok || l.State != relay.BreakerOpen {
		t.Fatalf("breakers on the cluster = %+v; want %s open", rep.Breakers, elsewhere)
	}
	if err := redistest.DeletePrefix(context.Background(), c, prefix); err != nil {
		t.Fatal(err)
	}
}
