package fetch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/sig"
)

func ExampleNew() {
	c, err := client.New(nil)
	if err != nil {
		panic(err)
	}
	// Sign GETs for servers requiring authorized fetch; remember per host
	// which scheme they accept.
	var signer *sig.Signer // from sig.NewSigner(key, keyID, nil)
	f, err := fetch.New(c, &fetch.Config{Signer: signer, Schemes: sig.NewHostSchemes(0)})
	if err != nil {
		panic(err)
	}
	_ = f
}

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

func ExampleFetcher_LookupPortable() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, &fetch.Config{Gateways: []string{"https://gateway.example"}})
	doc, err := f.LookupPortable(context.Background(), "ap://did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2/objects/1")
	if errors.Is(err, fetch.ErrProof) {
		return // no valid proof: not trusted
	}
	if err == nil {
		fmt.Println(doc.Proof)
	}
}

func ExampleIsActivityPub() {
	fmt.Println(fetch.IsActivityPub("application/activity+json; charset=utf-8"))
	fmt.Println(fetch.IsActivityPub(`application/ld+json; profile="https://www.w3.org/ns/activitystreams"`))
	fmt.Println(fetch.IsActivityPub("application/json"))
	// Output:
	// true
	// true
	// false
}

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

func ExampleFetcher_NodeInfo() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	ni, err := f.NodeInfo(context.Background(), "https://lemmy.example")
	if err == nil {
		fmt.Println(ni.Software.Name, ni.Software.Version)
	}
}

func ExampleParseNodeInfo() {
	ni, _ := fetch.ParseNodeInfo([]byte(`{"version":"2.0","software":{"name":"GoToSocial","version":"0.17.0"},"usage":{"users":{"total":"3"}}}`))
	fmt.Println(ni.Software.Name, *ni.Usage.Users.Total, ni.OpenRegistrations == nil)
	// Output: gotosocial 3 true
}

func ExampleParseNodeInfoLinks() {
	href, version, _ := fetch.ParseNodeInfoLinks([]byte(`{"links":[
{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"https://a.example/nodeinfo/2.0"},
{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.1","href":"https://a.example/nodeinfo/2.1"}]}`))
	fmt.Println(href, version)
	// Output: https://a.example/nodeinfo/2.1 2.1
}

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

func ExampleParseJRD() {
	j, _ := fetch.ParseJRD([]byte(`{"subject":"acct:rust@lemmy.example","links":[
{"rel":"self","type":"application/activity+json","href":"https://lemmy.example/c/rust","properties":{"https://www.w3.org/ns/activitystreams#type":"Group"}}]}`))
	fmt.Println(j.Subject, j.Actors()[0].ActorType)
	// Output: acct:rust@lemmy.example Group
}

func ExampleJRD_Actors() {
	j := &fetch.JRD{Subject: "acct:a@b.example", Links: []fetch.Link{
		{Rel: "self", Type: "text/html", Href: "https://b.example/@a"},
		{Rel: "self", Type: "application/activity+json", Href: "https://b.example/users/a"},
	}}
	fmt.Println(j.Actors()[0].Href)
	// Output: https://b.example/users/a
}

func ExampleParseHostMeta() {
	tmpl, _ := fetch.ParseHostMeta([]byte(`<?xml version="1.0"?><XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0"><Link rel="lrdd" template="https://b.example/.well-known/webfinger?resource={uri}"/></XRD>`))
	fmt.Println(tmpl)
	// Output: https://b.example/.well-known/webfinger?resource={uri}
}

func ExampleParseAddress() {
	a, _ := fetch.ParseAddress("@Alice@Mastodon.Example")
	fmt.Println(a, a.URI())
	// Output: Alice@mastodon.example acct:Alice@mastodon.example
}

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

func ExampleFetcher_Confirm() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	// Believe the actor's handle only if the handle's host names this actor.
	r, err := f.Confirm(context.Background(), "alice@mastodon.example", "https://mastodon.example/users/alice")
	if err == nil {
		fmt.Println(r.Handle)
	}
}

// cachedWF stands in for a WebFinger cache of the application's own.
type cachedWF struct{ inner fetch.WebFingerer }

func (c cachedWF) WebFinger(ctx context.Context, handle string) (*fetch.JRD, error) {
	return c.inner.WebFinger(ctx, handle)
}

func ExampleResolveWith() {
	wf := cachedWF{inner: staticWF{"acct:Alice@mastodon.example", "https://mastodon.example/users/alice"}}
	r, _ := fetch.ResolveWith(context.Background(), wf, "alice@mastodon.example")
	fmt.Println(r.Handle, r.Actor)
	// Output: Alice@mastodon.example https://mastodon.example/users/alice
}

func ExampleConfirmWith() {
	wf := staticWF{"acct:alice@mastodon.example", "https://mastodon.example/users/alice"}
	_, err := fetch.ConfirmWith(context.Background(), wf, "alice@mastodon.example", "https://mastodon.example/users/mallory")
	fmt.Println(errors.Is(err, fetch.ErrActorMismatch))
	// Output: true
}

type staticWF [2]string

func (s staticWF) WebFinger(ctx context.Context, handle string) (*fetch.JRD, error) {
	return &fetch.JRD{Subject: s[0], Links: []fetch.Link{{Rel: "self", Type: "application/activity+json", Href: s[1]}}}, nil
}

func ExampleWithBudget() {
	b := fetch.NewBudget(fetch.BudgetDefault)
	ctx := fetch.WithBudget(context.Background(), b)
	// Every fetch made while handling this activity spends from b.
	fmt.Println(fetch.BudgetFrom(ctx).Remaining())
	// Output: 1000
}

func ExampleNewBudget() {
	ctx := fetch.WithBudget(context.Background(), fetch.NewBudget(0))
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	_, err := f.Lookup(ctx, "https://mastodon.example/users/alice")
	fmt.Println(errors.Is(err, fetch.ErrBudgetExhausted))
	// Output: true
}

func ExampleLinkHeaderAlternate() {
	base, _ := url.Parse("https://mastodon.example/@alice/1")
	fmt.Println(fetch.LinkHeaderAlternate([]string{`</users/alice/statuses/1>; rel="alternate"; type="application/activity+json"`}, base))
	// Output: https://mastodon.example/users/alice/statuses/1
}

func ExampleHTMLAlternate() {
	base, _ := url.Parse("https://misskey.example/notes/9abc")
	page := `<html><head><link rel="alternate" type="application/activity+json" href="/notes/9abc"></head></html>`
	fmt.Println(fetch.HTMLAlternate([]byte(page), base))
	// Output: https://misskey.example/notes/9abc
}

func ExampleFetcher_WithSigner() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	var actorSigner *sig.Signer // the actor on whose behalf to fetch
	asActor := f.WithSigner(actorSigner)
	_, _ = asActor.Lookup(context.Background(), "https://secure.example/users/bob/followers")
}

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
