package relay_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/examples/relay/internal/relay"
	"github.com/fedkit/fedkit/examples/relay/internal/store"
	"github.com/fedkit/fedkit/fetch"
)

func ExampleNew() {
	ctx := context.Background()
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	subs, _ := store.OpenFile("data/subscribers.json")
	health := relay.NewHealth(0)
	cfg := deliver.DefaultConfig()
	cfg.OnAttempt = health.OnAttempt                       // per-host health for the status page
	cfg.SkipIf = relay.SkipUnsubscribed(subs, time.Second) // drop deliveries to leavers
	breakers := &deliver.MemoryBreakerStore{}
	cfg.Breaker.Store = breakers // ours, so the status page reads the state deliveries obey
	d, _ := deliver.New(&deliver.MemoryQueue{}, nil, c, cfg)
	go func() { _ = d.Run(ctx) }()

	r, err := relay.New(&relay.Config{PublicURL: "https://relay.example", Key: key, Store: subs,
		Sender: d, Lookup: f, Health: health, Breakers: relay.MemoryLights{Store: breakers}, BreakerStore: "memory",
		AdminToken: os.Getenv("ADMIN_TOKEN")})
	if err != nil {
		panic(err)
	}
	_ = http.ListenAndServe("127.0.0.1:8080", r.Handler())
}

func ExampleNewHealth() {
	h := relay.NewHealth(3)
	for range 3 {
		h.OnAttempt(context.Background(), deliver.Attempt{Host: "down.example", Outcome: deliver.AttemptFailed, StatusCode: 503})
	}
	hosts, _ := h.Snapshot()
	fmt.Println(hosts[0].Host, hosts[0].Breaker, hosts[0].ConsecutiveFailures)
	// Output: down.example open 3
}

func ExampleSkipUnsubscribed() {
	dir, _ := os.MkdirTemp("", "relay")
	defer os.RemoveAll(dir)
	subs, _ := store.OpenFile(filepath.Join(dir, "subscribers.json"))
	skip := relay.SkipUnsubscribed(subs, time.Second)
	fmt.Println(skip(context.Background(), "https://gone.example/inbox", &driver.Envelope{Tag: relay.TagRelay}))
	// Output: true
}
