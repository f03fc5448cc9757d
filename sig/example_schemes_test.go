package sig_test

import (
	"context"
	"fmt"

	"github.com/fedkit/fedkit/sig"
)

// ExampleNewHostSchemes remembers which scheme each host accepted; deliver
// and fetch default to this store, and one may serve both.
func ExampleNewHostSchemes() {
	var store sig.SchemeStore = sig.NewHostSchemes(1000)
	ctx := context.Background()
	_ = store.SetScheme(ctx, "mastodon.example", sig.SchemeCavage)
	s, ok, _ := store.Scheme(ctx, "mastodon.example")
	fmt.Println(s == sig.SchemeCavage, ok)
	// Output: true true
}
