package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/fetch"
)

// ExampleFetcher_Lookup fetches a document by any URL, a web page too, and
// refuses one whose id or author cannot be trusted.
func ExampleFetcher_Lookup() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	doc, err := f.Lookup(context.Background(), "https://mastodon.example/@alice/1") // a page: its alternate is fetched
	if errors.Is(err, fetch.ErrAuthorOrigin) || errors.Is(err, fetch.ErrIDMismatch) {
		return // not to be believed
	}
	if err != nil {
		return
	}
	fmt.Println(doc.ID, doc.Type, doc.URL)
}

// ExampleLookupAs fetches a document into the caller's own type.
func ExampleLookupAs() {
	type Note struct {
		ID, AttributedTo, Content string
	}
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	n, doc, err := fetch.LookupAs[Note](context.Background(), f, "https://mastodon.example/users/alice/statuses/1")
	if err != nil {
		return
	}
	fmt.Println(n.Content, doc.URL)
}

// ExampleIsActivityPub tells an ActivityPub media type from plain JSON.
func ExampleIsActivityPub() {
	fmt.Println(fetch.IsActivityPub("application/activity+json; charset=utf-8"))
	fmt.Println(fetch.IsActivityPub(`application/ld+json; profile="https://www.w3.org/ns/activitystreams"`))
	fmt.Println(fetch.IsActivityPub("application/json"))
	// Output:
	// true
	// true
	// false
}

// ExampleLinkHeaderAlternate finds the ActivityPub alternate a page's Link
// header names.
func ExampleLinkHeaderAlternate() {
	base, _ := url.Parse("https://mastodon.example/@alice/1")
	fmt.Println(fetch.LinkHeaderAlternate([]string{`</users/alice/statuses/1>; rel="alternate"; type="application/activity+json"`}, base))
	// Output: https://mastodon.example/users/alice/statuses/1
}

// ExampleHTMLAlternate finds the ActivityPub alternate a page's HTML names.
func ExampleHTMLAlternate() {
	base, _ := url.Parse("https://misskey.example/notes/9abc")
	page := `<html><head><link rel="alternate" type="application/activity+json" href="/notes/9abc"></head></html>`
	fmt.Println(fetch.HTMLAlternate([]byte(page), base))
	// Output: https://misskey.example/notes/9abc
}

// ExampleFetcher_UnverifiedJSON reads JSON that need not pass Lookup's
// rules, such as a collection page.
func ExampleFetcher_UnverifiedJSON() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	m, final, err := f.UnverifiedJSON(context.Background(), "https://mastodon.example/users/alice/followers?page=1")
	if errors.Is(err, fetch.ErrTemporary) {
		return // try again later
	}
	if err == nil {
		fmt.Println(m["type"], final)
	}
}

// ExampleDocument_Decode decodes a fetched document into the caller's own
// type.
func ExampleDocument_Decode() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	doc, err := f.Lookup(context.Background(), "https://mastodon.example/users/alice")
	if err != nil {
		return
	}
	var actor struct {
		Inbox             string `json:"inbox"`
		PreferredUsername string `json:"preferredUsername"`
	}
	if err := doc.Decode(&actor); err == nil {
		fmt.Println(actor.PreferredUsername, actor.Inbox)
	}
}

// ExampleStatusError backs off as the server asks when it is overloaded.
func ExampleStatusError() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	_, err := f.Lookup(context.Background(), "https://busy.example/users/alice")
	var se *fetch.StatusError
	if errors.Is(err, fetch.ErrTemporary) && errors.As(err, &se) {
		fmt.Println("retry after", se.RetryAfter, "status", se.StatusCode)
	}
}
