package ingest_test

import (
	"fmt"

	"github.com/fedkit/fedkit/examples/appview/internal/ingest"
	"github.com/fedkit/fedkit/identity"
)

func ExampleClassify() {
	busy := &identity.RefreshError{Class: identity.ClassBusy, Deferred: true, Reason: identity.ReasonLockBusy}
	fmt.Println(ingest.Classify(nil), ingest.Classify(busy), ingest.Code(busy))
	// Output: done busy lock-busy
}

func ExampleNew() {
	var deps ingest.Deps // Store, Refresher, Admitter and an uncached Resolver
	if _, err := ingest.New(deps, nil); err != nil {
		fmt.Println("missing dependencies are refused")
	}
	// Output: missing dependencies are refused
}
