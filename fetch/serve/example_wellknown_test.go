package serve_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/fetch/serve"
)

// ExampleWebFinger answers WebFinger for one account, by handle or actor
// URL.
func ExampleWebFinger() {
	const actor = "https://social.example/users/alice"
	http.Handle(serve.WebFingerPath, serve.WebFinger(func(ctx context.Context, resource string) (*serve.Account, error) {
		if user, ok := serve.AcctUser(resource, "social.example"); (ok && user == "alice") || resource == actor {
			return &serve.Account{Subject: "acct:alice@social.example", Aliases: []string{actor}, Actor: actor}, nil
		}
		return nil, nil // 404
	}))
}

// ExampleAcctUser reads the user of an acct: resource on this host.
func ExampleAcctUser() {
	fmt.Println(serve.AcctUser("acct:alice@Social.Example", "social.example"))
	// Output: alice true
}

// ExampleAccounts answers WebFinger from a table of accounts.
func ExampleAccounts() {
	find := serve.Accounts("social.example", map[string]string{"alice": "https://social.example/users/alice"})
	http.Handle(serve.WebFingerPath, serve.WebFinger(find))
	a, _ := find(context.Background(), "acct:alice@social.example")
	fmt.Println(a.Actor)
	// Output: https://social.example/users/alice
}

// ExampleHostMeta serves the host-meta document older servers look WebFinger
// up by.
func ExampleHostMeta() {
	http.Handle(serve.HostMetaPath, serve.HostMeta("https://social.example"))
}

// ExampleNodeInfo serves NodeInfo 2.1 and 2.0 and their discovery document.
func ExampleNodeInfo() {
	users := int64(1)
	ni := serve.NodeInfo("https://social.example", func(context.Context) (*fetch.NodeInfo, error) {
		return &fetch.NodeInfo{Software: fetch.Software{Name: "myserver", Version: "0.1"},
			Usage: fetch.Usage{Users: fetch.UserCounts{Total: &users}}}, nil
	})
	for _, p := range []string{serve.NodeInfoWellKnownPath, serve.NodeInfo21Path, serve.NodeInfo20Path} {
		http.Handle(p, ni)
	}
}
