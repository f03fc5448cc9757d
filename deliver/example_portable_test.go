package deliver_test

import (
	"context"
	"fmt"
	"log"

	"github.com/fedkit/fedkit/deliver"
)

func ExampleDeliverer_SendPortable() {
	var d *deliver.Deliverer // from deliver.New
	ctx := context.Background()
	// An activity with its eddsa-jcs-2022 proof attached (sig), to a
	// portable actor whose "gateways" the application read from the actor.
	create := []byte(`{"id":"https://a.example/activities/3","type":"Create","actor":"https://a.example/users/alice","object":{},"proof":{}}`)
	err := d.SendPortable(ctx, "https://a.example/users/alice#main-key", create, []deliver.PortableInbox{{
		Inbox:    "ap://did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2/actor/inbox",
		Gateways: []string{"https://gw1.example", "https://gw2.example"},
	}}, deliver.Batch{Tag: "portable-3"})
	if err != nil {
		log.Print(err)
	}
}

func ExampleGatewayInboxes() {
	urls, err := deliver.GatewayInboxes("ap://did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2/actor/inbox",
		[]string{"https://gw.example"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(urls[0])
	// Output: https://gw.example/.well-known/apgateway/did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2/actor/inbox
}
