package fetch_test

import (
	"context"
	"fmt"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/fetch"
)

// ExampleFetcher_NodeInfo reads what software a server runs.
func ExampleFetcher_NodeInfo() {
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	ni, err := f.NodeInfo(context.Background(), "https://lemmy.example")
	if err == nil {
		fmt.Println(ni.Software.Name, ni.Software.Version)
	}
}

// ExampleParseNodeInfo reads a NodeInfo document, normalising the software
// name.
func ExampleParseNodeInfo() {
	ni, _ := fetch.ParseNodeInfo([]byte(`{"version":"2.0","software":{"name":"GoToSocial","version":"0.17.0"},"usage":{"users":{"total":"3"}}}`))
	fmt.Println(ni.Software.Name, *ni.Usage.Users.Total, ni.OpenRegistrations == nil)
	// Output: gotosocial 3 true
}

// ExampleParseNodeInfoLinks picks the newest NodeInfo version a server
// links.
func ExampleParseNodeInfoLinks() {
	href, version, _ := fetch.ParseNodeInfoLinks([]byte(`{"links":[
{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"https://a.example/nodeinfo/2.0"},
{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.1","href":"https://a.example/nodeinfo/2.1"}]}`))
	fmt.Println(href, version)
	// Output: https://a.example/nodeinfo/2.1 2.1
}
