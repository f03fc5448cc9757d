package deliver_test

import (
	"context"
	"fmt"
	"log"

	"github.com/fedkit/fedkit/deliver"
)

func ExampleNewHostLimiter() {
	shared := deliver.NewHostLimiter(4) // every tenant's deliverer in this process
	for range 3 {
		cfg := deliver.DefaultConfig()
		cfg.HostLimiter = shared
		_ = cfg // deliver.New(queue, keys, client, cfg)
	}
}

func ExampleHostLimiter_Acquire() {
	l := deliver.NewHostLimiter(1)
	release, err := l.Acquire(context.Background(), "b.example")
	if err != nil {
		log.Fatal(err)
	}
	_, ok := l.TryAcquire("b.example") // the host's one slot is taken
	fmt.Println(l.InFlight("b.example"), ok)
	release()
	fmt.Println(l.InFlight("b.example"))
	// Output:
	// 1 false
	// 0
}
