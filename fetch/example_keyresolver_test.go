package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/sig"
)

// ExampleNewKeyResolver resolves the keys of signed requests to an inbox.
func ExampleNewKeyResolver() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	// Fetch keys signed as the instance actor, for authorized-fetch servers.
	var instance *sig.Signer // sig.NewSigner(instanceKey, instanceActor+"#main-key", nil)
	keys, err := fetch.NewKeyResolver(f, &fetch.KeyResolverConfig{Signer: instance})
	if err != nil {
		panic(err)
	}
	v, _ := sig.NewVerifier(keys, nil)
	http.Handle("POST /inbox", v.Middleware(http.NotFoundHandler()))
}

// ExampleKeyResolver_RefetchKey verifies again after a key rotation.
func ExampleKeyResolver_RefetchKey() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	keys, _ := fetch.NewKeyResolver(f, nil)
	v, _ := sig.NewVerifier(keys, nil)
	verify := func(req *http.Request, keyID sig.KeyID) (*sig.Result, error) {
		res, err := v.Verify(req)
		if errors.Is(err, sig.ErrBadSignature) {
			// The sender may have rotated its key: fetch it again, at
			// most once a minute per key, and verify once more.
			if _, rerr := keys.RefetchKey(req.Context(), keyID); rerr == nil {
				res, err = v.Verify(req)
			}
		}
		return res, err
	}
	_ = verify
}

// ExampleKeyResolver_ResolveKey tells a deleted account from other failures.
func ExampleKeyResolver_ResolveKey() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	keys, _ := fetch.NewKeyResolver(f, nil)
	id, _ := sig.ParseKeyID("https://gone.example/users/bob#main-key")
	_, err := keys.ResolveKey(context.Background(), id)
	if errors.Is(err, sig.ErrGone) {
		fmt.Println("the account was deleted; accept its own Delete")
	}
}

// ExampleFetcher_Refetch believes a relayed activity only as its own origin
// serves it.
func ExampleFetcher_Refetch() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	// An activity relayed by someone else: believe it only as its own
	// origin serves it (sig/inbox.Config.Objects does this).
	body, err := f.Refetch(context.Background(), "https://social.example/users/alice/statuses/1/activity")
	if errors.Is(err, fetch.ErrIDMismatch) {
		return // the origin serves something else under that id
	}
	_ = body
}

// ExampleKeyResolver_Forget drops a cached key, for when its actor is known
// to have changed it.
func ExampleKeyResolver_Forget() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	keys, _ := fetch.NewKeyResolver(f, nil)
	id, _ := sig.ParseKeyID("https://social.example/users/alice#main-key")
	keys.Forget(id) // the next ResolveKey fetches it afresh
}
