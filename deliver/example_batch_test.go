package deliver_test

import (
	"context"
	"log"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
)

func ExampleDeliverer_SendBatch() {
	var d *deliver.Deliverer // from deliver.New
	ctx := context.Background()
	del := []byte(`{"id":"https://a.example/activities/2","type":"Delete","actor":"https://a.example/users/alice","object":"https://a.example/notes/1"}`)
	err := d.SendBatch(ctx, "https://a.example/users/alice#main-key", del, []string{"https://b.example/inbox"}, deliver.Batch{
		Tag:                   "delete-note-1",
		Deadline:              time.Now().Add(24 * time.Hour),
		OrderingKey:           "https://a.example/notes/1", // never overtakes the Create
		SynchronizeCollection: true,
	})
	if err != nil {
		log.Print(err)
	}
}

func ExampleDeliverer_Status() {
	var d *deliver.Deliverer // from deliver.New
	st, err := d.Status(context.Background(), "delete-note-1")
	if err == nil && st.Done() {
		log.Printf("delivered %d, failed %d, gave up %d, skipped %d", st.Delivered, st.Failed, st.GaveUp, st.Skipped)
	}
}

func ExampleDeliverer_Drop() {
	var d *deliver.Deliverer // from deliver.New
	// An account was deleted: stop sending what it queued.
	n, err := d.Drop(context.Background(), driver.DropFilter{ActorID: "https://a.example/users/alice"})
	log.Print(n, err)
}

// A reply goes in the priority lane, ahead of a post to thousands of
// inboxes; a backfill waits in the low lane until nothing else is due.
func ExampleBatch() {
	var d *deliver.Deliverer // from deliver.New
	ctx := context.Background()
	reply := []byte(`{"id":"https://a.example/activities/4","type":"Create","actor":"https://a.example/users/alice","object":{}}`)
	_ = d.SendBatch(ctx, "https://a.example/users/alice#main-key", reply, []string{"https://b.example/users/bob/inbox"},
		deliver.Batch{Lane: driver.LanePriority})
	old := []byte(`{"id":"https://a.example/activities/0","type":"Announce","actor":"https://a.example/users/alice","object":"https://c.example/notes/9"}`)
	_ = d.SendBatch(ctx, "https://a.example/users/alice#main-key", old, []string{"https://d.example/inbox"},
		deliver.Batch{Tag: "backfill", Lane: driver.LaneLow, MaxAttempts: 3})
}
