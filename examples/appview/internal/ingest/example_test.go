package ingest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/fedkit/fedkit/examples/appview/internal/ingest"
	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
)

func ExampleClassify() {
	busy := &identity.RefreshError{Class: identity.ClassBusy, Deferred: true, Reason: identity.ReasonLockBusy}
	fmt.Println(ingest.Classify(nil), ingest.Classify(busy), ingest.Code(busy))
	// Output: done busy lock-busy
}

func ExampleNew() {
	var deps ingest.Deps // Store, Refresher, Admitter, an uncached Resolver and HostedBy
	if _, err := ingest.New(deps, nil); err != nil {
		fmt.Println("missing dependencies are refused")
	}
	// Output: missing dependencies are refused
}

func ExampleValidateCommunityHandle() {
	fmt.Println(ingest.ValidateCommunityHandle("news.lemmy.world.ap.tdpl.io") == nil)
	fmt.Println(ingest.ValidateCommunityHandle("tdpl.io") == nil)
	// Output:
	// true
	// false
}

func ExampleHostedBy_Check() {
	res := identitytest.NewResolver()
	res.Set(identity.Identity{DID: "did:web:ap.tdpl.io", Handle: identity.HandleInvalid})
	c := ingest.HostedBy{Resolver: res}
	err := c.Check(context.Background(), "did:web:ap.tdpl.io", "news.lemmy.world.ap.tdpl.io")
	fmt.Println(err)
	err = c.Check(context.Background(), "did:web:ap.tdpl.io", "news.evil.test")
	fmt.Println(errors.Is(err, identity.ErrHostedByMismatch))
	// Output:
	// <nil>
	// true
}
