package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/examples/relay/internal/config"
	"github.com/fedkit/fedkit/examples/relay/internal/store"
	"github.com/fedkit/fedkit/internal/pgtest"
)

// `relay subscribers unavailable` lists the subscribers whose host has
// been unavailable 30 days, and with --remove deletes them once confirmed;
// with Redis or Postgres holding the availability the server wrote.
func TestSubscribersUnavailableCommand(t *testing.T) {
	t.Run("redis", func(t *testing.T) { testSubscribersUnavailable(t, sharedBackends(t)) })
	t.Run("postgres only", func(t *testing.T) {
		testSubscribersUnavailable(t, fmt.Sprintf("POSTGRES_URL: %q\n", pgtest.ConnString(t)))
	})
}

func testSubscribersUnavailable(t *testing.T, backends string) {
	ctx := context.Background()
	p := serverConfig(t, "PUBLIC_URL: https://relay.example\nDATA_DIR: .\n"+backends)
	cfg, err := config.Load(p, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, _, _ := testEnv(t)
	seed, err := openApp(ctx, cfg, e, false)
	if err != nil {
		t.Fatal(err)
	}
	defer seed.close()
	rule := driver.AvailabilityRule{Days: deliver.AvailabilityDaysDefault}
	now := time.Now()
	fail := func(host string, first time.Time) {
		for d := range rule.Days {
			if _, _, err := seed.avail.Failure(ctx, host, first.Add(time.Duration(d)*24*time.Hour), rule); err != nil {
				t.Fatal(err)
			}
		}
	}
	fail("gone.example", now.Add(-45*24*time.Hour))   // unavailable 39 days
	fail("recent.example", now.Add(-15*24*time.Hour)) // unavailable 9 days
	for _, h := range []string{"gone.example", "recent.example", "up.example"} {
		s := store.Subscriber{Actor: "https://" + h + "/actor", Inbox: "https://" + h + "/inbox", Host: h,
			Style: store.StyleMastodon, State: store.StateActive, Since: now}
		if err := seed.store.Put(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	cmd := func(stdin string, args ...string) (int, string) {
		e, out, errb := testEnv(t)
		e.stdin = strings.NewReader(stdin)
		code := run(ctx, append([]string{"-c", p, "subscribers", "unavailable"}, args...), e)
		return code, out.String() + errb.String()
	}
	code, out := cmd("")
	if code != exitOK || !strings.Contains(out, "https://gone.example/actor") || strings.Contains(out, "recent.example") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	if code, out := cmd("no\n", "--remove"); code != exitFailed || !strings.Contains(out, "nothing removed") {
		t.Fatalf("refused confirmation: exit %d\n%s", code, out)
	}
	if _, ok, _ := seed.store.Get(ctx, "https://gone.example/actor"); !ok {
		t.Fatal("removed without confirmation")
	}
	if code, out := cmd("yes\n", "--remove"); code != exitOK || !strings.Contains(out, "removed 1 subscribers") {
		t.Fatalf("confirmed: exit %d\n%s", code, out)
	}
	if _, ok, _ := seed.store.Get(ctx, "https://gone.example/actor"); ok {
		t.Fatal("still subscribed after removal")
	}
	for _, a := range []string{"https://recent.example/actor", "https://up.example/actor"} {
		if _, ok, _ := seed.store.Get(ctx, a); !ok {
			t.Fatalf("%s removed", a)
		}
	}
	if code, _ := cmd("", "--yes"); code != exitUsage {
		t.Fatalf("--yes without --remove: exit %d", code)
	}
	// The operator's clear.
	e2, out2, errb2 := testEnv(t)
	if code := run(ctx, []string{"-c", p, "hosts", "available", "Recent.example"}, e2); code != exitOK {
		t.Fatalf("hosts available: exit %d\n%s%s", code, out2, errb2)
	}
	if _, down, _ := seed.avail.Unavailable(ctx, "recent.example"); down {
		t.Fatal("recent.example still unavailable after the operator's clear")
	}
}

// Without Redis or Postgres the command says it cannot reach the store.
func TestSubscribersUnavailableNeedsSharedStore(t *testing.T) {
	p := serverConfig(t, "PUBLIC_URL: https://relay.example\nDATA_DIR: .\n")
	e, _, errb := testEnv(t)
	if code := run(context.Background(), []string{"-c", p, "subscribers", "unavailable"}, e); code != exitConfig || !strings.Contains(errb.String(), "REDIS_URL") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}
