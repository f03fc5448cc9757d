package inbox_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/inbox"
)

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

func ExampleHandler_Accept() {
	var keys sig.KeyResolver
	in, _ := inbox.New(keys, func(context.Context, *inbox.Activity) error { return nil }, nil)
	http.HandleFunc("POST /custom-inbox", func(w http.ResponseWriter, r *http.Request) {
		a, err := in.Accept(r)
		if re, ok := err.(*inbox.RefusalError); ok {
			http.Error(w, re.Reason.String(), re.Reason.Status())
			return
		}
		fmt.Fprintln(w, a.Trust)
	})
}

func ExampleNewAuthorizedFetch() {
	var keys sig.KeyResolver // a *fetch.KeyResolver
	mux := http.NewServeMux()
	h, err := inbox.NewAuthorizedFetch(keys, mux, &inbox.AuthorizedFetchConfig{
		// Servers fetch the instance actor to check our own signed GETs.
		Allow: func(r *http.Request) bool { return r.URL.Path == "/actor" },
	})
	if err != nil {
		return
	}
	mux.HandleFunc("GET /users/{name}", func(w http.ResponseWriter, r *http.Request) {
		if s, ok := inbox.SignerFromContext(r.Context()); ok {
			_ = s.Owner // the fetching actor: check it against blocks
		}
	})
	_ = http.ListenAndServe("127.0.0.1:8080", h)
}

func ExampleReason() {
	fmt.Println(inbox.ReasonSignerNotActor, inbox.ReasonSignerNotActor.Status())
	fmt.Println(inbox.ReasonBodyTooLarge, inbox.ReasonBodyTooLarge.Status())
	// Output:
	// signer is not the activity's actor 202
	// body too large 413
}

// WantsActivityPub tells an ActivityPub GET (serve the JSON document)
// from a browser's (serve the HTML page).
func ExampleWantsActivityPub() {
	r := httptest.NewRequest(http.MethodGet, "https://local.example/users/alice", nil)
	r.Header.Set("Accept", `application/ld+json; profile="https://www.w3.org/ns/activitystreams"`)
	fmt.Println(inbox.WantsActivityPub(r))
	r.Header.Set("Accept", "text/html,application/xhtml+xml")
	fmt.Println(inbox.WantsActivityPub(r))
	// Output:
	// true
	// false
}
