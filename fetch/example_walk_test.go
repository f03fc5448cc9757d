package fetch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/fetch"
)

// ExampleFetcher_Walk reads an outbox, believing another server's objects
// only from their own ids.
func ExampleFetcher_Walk() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	ctx := context.Background()
	w := f.Walk("https://mastodon.example/users/alice/outbox", fetch.WalkLimits{})
	for item, err := range w.All(ctx) {
		if errors.Is(err, fetch.ErrWalkLimit) {
			break // 100 pages or 10,000 items read
		}
		if err != nil {
			return
		}
		if item.Claim {
			// Another server's object: believe it only from its own id.
			_, _ = f.Lookup(ctx, item.ID)
		}
	}
}

// ExampleWalk_Next reads a collection one item at a time.
func ExampleWalk_Next() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	w := f.Walk("https://mastodon.example/users/alice/followers", fetch.WalkLimits{Items: 50})
	for {
		item, err := w.Next(context.Background())
		if err != nil {
			break // io.EOF at the end
		}
		fmt.Println(item.IRI)
	}
}

// ExampleWalk_NextPage reads a collection a page at a time.
func ExampleWalk_NextPage() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	w := f.Walk("https://lemmy.example/c/rust/outbox", fetch.WalkLimits{Pages: 5})
	for {
		page, err := w.NextPage(context.Background())
		if err != nil {
			break
		}
		fmt.Println(len(page))
	}
}

// ExampleFetcher_WalkEmbedded walks a collection embedded in a document,
// such as a post's replies.
func ExampleFetcher_WalkEmbedded() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	var post struct {
		ID      string          `json:"id"`
		Replies json.RawMessage `json:"replies"`
	}
	doc, err := f.Lookup(context.Background(), "https://mastodon.example/users/alice/statuses/1")
	if err != nil || doc.Decode(&post) != nil {
		return
	}
	w := f.WalkEmbedded(doc.ID, post.Replies, fetch.WalkLimits{Pages: 3})
	_, _ = w.NextPage(context.Background())
}

// ExampleWalk_All reads a followers collection up to its limits and says
// how far it got.
func ExampleWalk_All() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	w := f.Walk("https://mastodon.example/users/alice/followers", fetch.WalkLimits{Pages: 10})
	var followers []string
	for item, err := range w.All(context.Background()) {
		if errors.Is(err, fetch.ErrWalkLimit) {
			fmt.Printf("stopped after %d pages, %d items\n", w.Pages(), w.Items())
			break
		}
		if err != nil {
			return
		}
		followers = append(followers, item.IRI)
	}
	_ = followers
}
