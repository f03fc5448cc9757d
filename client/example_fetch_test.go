package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"

	"github.com/fedkit/fedkit/client"
)

// ExampleClient_Do fetches an ActivityPub document through the guard and
// tells a refused address and an oversized body from other failures.
func ExampleClient_Do() {
	c, err := client.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "https://social.example/users/alice", nil)
	req.Header.Set("Accept", "application/activity+json")
	resp, err := c.Do(req)
	var blocked *client.BlockedError
	switch {
	case errors.As(err, &blocked):
		log.Printf("refused %s (%s in %s)", blocked.Host, blocked.Addr, blocked.Range)
		return
	case err != nil:
		log.Print(err)
		return
	}
	doc, err := client.ReadAll(resp)
	if errors.Is(err, client.ErrTooLarge) {
		log.Print("document over 1 MiB")
		return
	}
	fmt.Println(resp.Request.URL, len(doc)) // the URL it was finally served from
}

// ExampleReadAll reads a capped body whole: past the cap it fails, it
// never returns a truncated document.
func ExampleReadAll() {
	c, err := client.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "https://social.example/.well-known/nodeinfo", nil)
	resp, err := c.Do(req)
	if err != nil {
		log.Print(err)
		return
	}
	b, err := client.ReadAll(resp) // closes the body; ErrTooLarge past the cap
	if err != nil {
		log.Print(err)
		return
	}
	fmt.Println(len(b))
}
