package fetch_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/fetch"
)

// ExampleFetcher_LookupPortable fetches a portable object through gateways
// and believes it only with a valid proof.
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
