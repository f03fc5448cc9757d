package client_test

import (
	"fmt"
	"log"
	"net/netip"

	"github.com/fedkit/fedkit/client"
)

// ExampleNew builds the client a fediverse server talks to the fediverse
// with.
func ExampleNew() {
	// Defaults: public addresses only, 3 redirect hops, 1 MiB bodies.
	c, err := client.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	_ = c
}

// ExampleNew_development reaches a development server on this machine,
// which the defaults refuse.
func ExampleNew_development() {
	c, err := client.New(&client.Config{
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.ValidateURL("http://127.0.0.1:3000/inbox"))
	// Output: <nil>
}

// ExampleNew_directory reaches a service inside a deployment, found
// through split DNS: it may live on a private address but never on
// loopback or link-local; it must not redirect and need not compress.
func ExampleNew_directory() {
	c, err := client.New(&client.Config{
		Policy:             client.PolicyNonLocal,
		MaxRedirects:       client.NoRedirects,
		DisableCompression: true,
		MaxBodyBytes:       256 << 10,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.ValidateURL("http://10.0.0.7/api"))
	fmt.Println(c.ValidateURL("http://169.254.169.254/") != nil)
	// Output:
	// <nil>
	// true
}

// ExampleClient_CloseIdleConnections releases the pooled connections of a
// client that is done.
func ExampleClient_CloseIdleConnections() {
	c, err := client.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.CloseIdleConnections()
}
