package client_test

import (
	"context"
	"errors"
	"log"
	"net/http"

	"github.com/fedkit/fedkit/client"
)

// ExampleClient_DoWith_post posts to an inbox: a redirect of a POST is
// reported, never followed.
func ExampleClient_DoWith_post() {
	c, err := client.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "https://social.example/inbox", nil)
	_, err = c.Do(req)
	var redirect *client.RedirectError
	if errors.As(err, &redirect) {
		// Nothing was re-sent; Location says where the inbox moved.
		log.Printf("inbox answered %d, Location %s", redirect.StatusCode, redirect.Location)
	}
}
