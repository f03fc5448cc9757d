package fetch_test

import (
	"context"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/sig"
)

// ExampleNew builds a Fetcher that signs its GETs for servers requiring
// authorized fetch.
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

// ExampleFetcher_WithSigner fetches on behalf of one actor, as a server that
// answers only that actor (its followers-only collections) requires.
func ExampleFetcher_WithSigner() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	var actorSigner *sig.Signer // the actor on whose behalf to fetch
	asActor := f.WithSigner(actorSigner)
	_, _ = asActor.Lookup(context.Background(), "https://secure.example/users/bob/followers")
}
