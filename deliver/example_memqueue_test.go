package deliver_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
)

func ExampleMemoryQueue() {
	q := &deliver.MemoryQueue{}
	_ = q.Enqueue(context.Background(), &driver.Envelope{
		KeyID: "https://a.example/users/alice#main-key", Body: []byte(`{}`),
		Inboxes: []string{"https://b.example/inbox", "https://c.example/inbox"}, EnqueuedAt: time.Now(),
	})
	fmt.Println(q.Len())
	// Output: 2
}

func ExampleMemoryQueue_Depth() {
	ctx := context.Background()
	q := &deliver.MemoryQueue{}
	_ = q.Enqueue(ctx, &driver.Envelope{
		Body: []byte(`{}`), Lane: driver.LanePriority, EnqueuedAt: time.Now(),
		Inboxes: []string{"https://b.example/inbox"},
	})
	_ = q.Enqueue(ctx, &driver.Envelope{
		Body: []byte(`{}`), EnqueuedAt: time.Now(),
		Inboxes: []string{"https://b.example/inbox", "https://c.example/inbox"},
	})
	depth := q.Depth() // for a status page; pgqueue's Queue.Depth means the same
	for _, lane := range []driver.Lane{driver.LanePriority, driver.LaneNormal, driver.LaneLow} {
		fmt.Println(lane, depth[lane])
	}
	// Output:
	// priority 1
	// normal 2
	// low 0
}
