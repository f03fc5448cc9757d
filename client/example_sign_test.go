package client_test

import (
	"context"
	"log"
	"net/http"

	"github.com/fedkit/fedkit/client"
)

// ExampleClient_DoWith signs a request and each of its redirect hops.
func ExampleClient_DoWith() {
	c, err := client.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	// sign is called for the request and again for every redirect hop, with
	// that hop's URL, so each hop carries a signature over its own target.
	sign := func(r *http.Request) error {
		r.Header.Set("Signature", "keyId=...") // a real signer from package sig
		return nil
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "https://social.example/users/alice/outbox", nil)
	resp, err := c.DoWith(req, &client.DoOpts{Sign: sign})
	if err != nil {
		log.Print(err)
		return
	}
	defer resp.Body.Close()
}
