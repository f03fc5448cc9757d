package fetch_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/fetch"
)

// ExampleFetcher_WebFinger looks a handle up; Lemmy names a user and a
// community for one name.
func ExampleFetcher_WebFinger() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	j, err := f.WebFinger(context.Background(), "@rust@lemmy.example")
	if err != nil {
		return
	}
	for _, a := range j.Actors() {
		fmt.Println(a.Href, a.ActorType) // a Person and a Group on Lemmy
	}
}

// ExampleParseJRD reads a WebFinger answer.
func ExampleParseJRD() {
	j, _ := fetch.ParseJRD([]byte(`{"subject":"acct:rust@lemmy.example","links":[
{"rel":"self","type":"application/activity+json","href":"https://lemmy.example/c/rust","properties":{"https://www.w3.org/ns/activitystreams#type":"Group"}}]}`))
	fmt.Println(j.Subject, j.Actors()[0].ActorType)
	// Output: acct:rust@lemmy.example Group
}

// ExampleJRD_Actors keeps the self links that name ActivityPub actors.
func ExampleJRD_Actors() {
	j := &fetch.JRD{Subject: "acct:a@b.example", Links: []fetch.Link{
		{Rel: "self", Type: "text/html", Href: "https://b.example/@a"},
		{Rel: "self", Type: "application/activity+json", Href: "https://b.example/users/a"},
	}}
	fmt.Println(j.Actors()[0].Href)
	// Output: https://b.example/users/a
}

// ExampleParseHostMeta reads the WebFinger template of a host-meta document.
func ExampleParseHostMeta() {
	tmpl, _ := fetch.ParseHostMeta([]byte(`<?xml version="1.0"?><XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0"><Link rel="lrdd" template="https://b.example/.well-known/webfinger?resource={uri}"/></XRD>`))
	fmt.Println(tmpl)
	// Output: https://b.example/.well-known/webfinger?resource={uri}
}

// ExampleParseAddress reads a handle in any of its spellings.
func ExampleParseAddress() {
	a, _ := fetch.ParseAddress("@Alice@Mastodon.Example")
	fmt.Println(a, a.URI())
	// Output: Alice@mastodon.example acct:Alice@mastodon.example
}

// ExampleFetcher_Resolve resolves a handle to its actor, as Mastodon does
// before fetching it.
func ExampleFetcher_Resolve() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	r, err := f.Resolve(context.Background(), "@alice@mastodon.example")
	if errors.Is(err, fetch.ErrGone) {
		return // the account is gone from its host
	}
	if err == nil {
		fmt.Println(r.Handle, r.Actor)
	}
}

// ExampleFetcher_Confirm believes an actor's handle only if the handle's
// host names that actor.
func ExampleFetcher_Confirm() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	// Believe the actor's handle only if the handle's host names this actor.
	r, err := f.Confirm(context.Background(), "alice@mastodon.example", "https://mastodon.example/users/alice")
	if err == nil {
		fmt.Println(r.Handle)
	}
}

// ExampleResolveAs resolves a handle and fetches its actor into the caller's
// own type.
func ExampleResolveAs() {
	type Actor struct{ ID, Inbox string }
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	a, _, err := fetch.ResolveAs[Actor](context.Background(), f, "@alice@mastodon.example")
	if err != nil {
		return
	}
	fmt.Println(a.ID, a.Inbox)
}

// ExampleResolveWith resolves through a WebFinger of the application's own,
// such as a cache.
func ExampleResolveWith() {
	wf := cachedWF{inner: staticWF{"acct:Alice@mastodon.example", "https://mastodon.example/users/alice"}}
	r, _ := fetch.ResolveWith(context.Background(), wf, "alice@mastodon.example")
	fmt.Println(r.Handle, r.Actor)
	// Output: Alice@mastodon.example https://mastodon.example/users/alice
}

// ExampleConfirmWith refuses a handle whose host names another actor.
func ExampleConfirmWith() {
	wf := staticWF{"acct:alice@mastodon.example", "https://mastodon.example/users/alice"}
	_, err := fetch.ConfirmWith(context.Background(), wf, "alice@mastodon.example", "https://mastodon.example/users/mallory")
	fmt.Println(errors.Is(err, fetch.ErrActorMismatch))
	// Output: true
}

// cachedWF stands in for a WebFinger cache of the application's own.
type cachedWF struct{ inner fetch.WebFingerer }

func (c cachedWF) WebFinger(ctx context.Context, handle string) (*fetch.JRD, error) {
	return c.inner.WebFinger(ctx, handle)
}

type staticWF [2]string

func (s staticWF) WebFinger(ctx context.Context, handle string) (*fetch.JRD, error) {
	return &fetch.JRD{Subject: s[0], Links: []fetch.Link{{Rel: "self", Type: "application/activity+json", Href: s[1]}}}, nil
}
