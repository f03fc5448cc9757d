package jetstream_test

import (
	"context"
	"fmt"

	"github.com/fedkit/fedkit/examples/appview/internal/jetstream"
)

func ExampleParse() {
	f, err := jetstream.Parse([]byte(`{"did":"did:plc:aaaaaaaaaaaaaaaaaaaaaaaa","time_us":1780000000000001,"kind":"identity","identity":{"did":"did:plc:aaaaaaaaaaaaaaaaaaaaaaaa","seq":7,"time":"2026-11-29T12:00:00.000Z"}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Kind, f.Identity.Seq, f.TimeUS)
	// Output: identity 7 1780000000000001
}

func ExampleNew() {
	handle := func(ctx context.Context, f jetstream.Frame) error {
		fmt.Println(f.Kind, f.DID)
		return nil // durably handled: the cursor may pass it
	}
	c, err := jetstream.New(&jetstream.MemoryCursors{}, handle, &jetstream.Config{URL: "ws://localhost:6008/subscribe"})
	if err != nil {
		panic(err)
	}
	_ = c.Run // c.Run(ctx) consumes until ctx ends
}
