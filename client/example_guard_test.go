package client_test

import (
	"errors"
	"fmt"
	"log"
	"net/netip"

	"github.com/fedkit/fedkit/client"
)

// ExampleClient_ValidateURL checks URLs before storing or sending to them,
// under the client's own rules.
func ExampleClient_ValidateURL() {
	c, err := client.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, u := range []string{
		"https://social.example/users/alice",
		"http://169.254.169.254/latest/meta-data/",
		"http://[::ffff:127.0.0.1]/",
		"http://[64:ff9b::808:808]/",
		"ftp://social.example/",
		"http://abcdefgh.onion/",
	} {
		err := c.ValidateURL(u)
		fmt.Println(err == nil, errors.Is(err, client.ErrBlocked))
	}
	// AllowOnion admits hidden-service hosts; their addresses are still
	// checked when the client connects.
	onion, err := client.New(&client.Config{AllowOnion: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(onion.ValidateURL("http://abcdefgh.onion/"))
	// Output:
	// true false
	// false true
	// false true
	// false true
	// false false
	// false false
	// <nil>
}

// ExamplePolicy_Refuses classifies addresses as the guard does.
func ExamplePolicy_Refuses() {
	for _, s := range []string{"8.8.8.8", "10.0.0.1", "::127.0.0.1", "2002:808:808::1"} {
		r, refused := client.PolicyPublic.Refuses(netip.MustParseAddr(s))
		fmt.Println(s, refused, r)
	}
	// Output:
	// 8.8.8.8 false invalid Prefix
	// 10.0.0.1 true 10.0.0.0/8
	// ::127.0.0.1 true 127.0.0.0/8
	// 2002:808:808::1 true 2002::/16
}
