package deliver_test

import (
	"context"
	"crypto"
	"fmt"
	"log"
	"log/slog"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
)

// appKeys stands for an application's key table.
type appKeys struct{}

func (appKeys) Key(ctx context.Context, keyID string) (crypto.Signer, error) { return testKey, nil }
func (appKeys) Gone(ctx context.Context, keyID string) (bool, error)         { return false, nil }

func ExampleNew() {
	c, err := client.New(nil) // the guarded client
	if err != nil {
		log.Fatal(err)
	}
	cfg := deliver.DefaultConfig() // breaker on: 10 failures, 1 min
	cfg.Logger = slog.Default()
	cfg.OnFailure = func(ctx context.Context, f deliver.Failure) {
		log.Printf("%s refused %s for good: %d", f.Host, f.ActivityID, f.StatusCode)
	}
	d, err := deliver.New(&deliver.MemoryQueue{}, deliver.NewCachingSenderKeys(appKeys{}, nil), c, cfg)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go d.Run(ctx) // on stop, finishes what is in flight
}

func ExampleDefaultConfig() {
	cfg := deliver.DefaultConfig()
	fmt.Println(cfg.Breaker != nil)
	cfg.DisableBreaker = true // no breaker (a nil Breaker means the defaults)
	// Output: true
}

func ExampleDeliverer_Send() {
	var d *deliver.Deliverer // from deliver.New
	ctx := context.Background()
	create := []byte(`{"id":"https://a.example/activities/1","type":"Create","actor":"https://a.example/users/alice","object":{}}`)
	inboxes := []string{"https://b.example/inbox", "https://c.example/users/bob/inbox"}
	if err := d.Send(ctx, "https://a.example/users/alice#main-key", create, inboxes); err != nil {
		log.Print(err)
	}
}

func ExampleDeliverer_Run() {
	var d *deliver.Deliverer // from deliver.New
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	// ... on SIGTERM:
	stop()
	<-done // in-flight deliveries finished (within ShutdownGrace); the rest stay queued
}

func ExampleDeliverer_RunDue() {
	var d *deliver.Deliverer // from deliver.New
	n, err := d.RunDue(context.Background())
	log.Printf("worked %d due deliveries: %v", n, err)
}
