package inbox_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"

	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/inbox"
)

// ExampleNew receives activities, verified, with how far each is to be
// trusted.
func ExampleNew() {
	var keys sig.KeyResolver // a *fetch.KeyResolver
	in, err := inbox.New(keys, func(ctx context.Context, a *inbox.Activity) error {
		switch a.Type {
		case "Follow":
			// a.Actor wants to follow a.Object; Accept it.
		case "Create":
			var create struct {
				Object struct{ Content string } `json:"object"`
			}
			if err := a.Decode(&create); err != nil {
				return nil // malformed: drop it, do not make the sender retry
			}
		}
		log.Printf("%s from %s (%s)", a.Type, a.Actor, a.Trust)
		return nil
	}, nil)
	if err != nil {
		return // keys is nil in this sketch
	}
	http.Handle("POST /inbox", in)
}

// ExampleHandler_Accept verifies in a handler of the application's own and
// answers refusals itself.
func ExampleHandler_Accept() {
	var keys sig.KeyResolver
	in, _ := inbox.New(keys, func(context.Context, *inbox.Activity) error { return nil }, nil)
	http.HandleFunc("POST /custom-inbox", func(w http.ResponseWriter, r *http.Request) {
		a, err := in.Accept(r)
		var re *inbox.RefusalError
		if errors.As(err, &re) {
			http.Error(w, re.Reason.String(), re.Reason.Status())
			return
		}
		fmt.Fprintln(w, a.Trust)
	})
}

// ExampleReason maps a refusal to the status the sender gets.
func ExampleReason() {
	fmt.Println(inbox.ReasonSignerNotActor, inbox.ReasonSignerNotActor.Status())
	fmt.Println(inbox.ReasonBodyTooLarge, inbox.ReasonBodyTooLarge.Status())
	// Output:
	// signer is not the activity's actor 202
	// body too large 413
}
