package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/netip"

	"github.com/fedkit/fedkit/client"
)

func ExampleNew() {
	// Defaults: public addresses only, 3 redirect hops, 1 MiB bodies.
	c, err := client.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	_ = c
}

func ExampleNew_development() {
	// A development server on this machine is reachable only when allowed.
	c, err := client.New(&client.Config{
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.ValidateURL("http://127.0.0.1:3000/inbox"))
	// Output: <nil>
}

func ExampleNew_directory() {
	// A service inside a deployment, found through split DNS, may live on a
	// private address but never on loopback or link-local; it must not
	// redirect and need not compress.
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

func ExampleClient_Do() {
	c, err := client.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "https://social.example/users/alice", nil)
	req.Header.Set("Accept", "application/activity+json")
	resp, err := c.Do(req)
	var blocked *client.BlockedError
	switch {
	case errors.As(err, &blocked):
		log.Printf("refused %s (%s)", blocked.Host, blocked.Addr)
		return
	case err != nil:
		log.Print(err)
		return
	}
	doc, err := client.ReadAll(resp)
	if errors.Is(err, client.ErrTooLarge) {
		log.Print("document over 1 MiB")
		return
	}
	fmt.Println(resp.Request.URL, len(doc)) // the URL it was finally served from
}

func ExampleClient_DoWith() {
	c, err := client.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	// sign is called for the request and again for every redirect hop, with
	// that hop's URL, so each hop carries a signature over its own target.
	sign := func(r *http.Request) error {
		r.Header.Set("Signature", "keyId=...") // a real signer from package sig
		return nil
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "https://social.example/users/alice/outbox", nil)
	resp, err := c.DoWith(req, &client.DoOpts{Sign: sign})
	if err != nil {
		log.Print(err)
		return
	}
	defer resp.Body.Close()
}

func ExampleClient_DoWith_stream() {
	c, err := client.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	// A media file: URL, addresses and redirects checked, body uncapped.
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "https://files.social.example/video.mp4", nil)
	resp, err := c.DoWith(req, &client.DoOpts{Stream: true})
	if err != nil {
		log.Print(err)
		return
	}
	defer resp.Body.Close()
	// io.Copy(dst, resp.Body)
}

func ExampleClient_DoWith_post() {
	c, err := client.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "https://social.example/inbox", nil)
	_, err = c.Do(req)
	var redirect *client.RedirectError
	if errors.As(err, &redirect) {
		// A delivery's redirect is never followed: nothing was re-sent.
		log.Printf("inbox answered %d", redirect.StatusCode)
	}
}

func ExampleValidateURL() {
	for _, u := range []string{
		"https://social.example/users/alice",
		"http://169.254.169.254/latest/meta-data/",
		"http://[::ffff:127.0.0.1]/",
		"http://[64:ff9b::808:808]/",
		"ftp://social.example/",
		"http://abcdefgh.onion/",
	} {
		err := client.ValidateURL(u)
		fmt.Println(err == nil, errors.Is(err, client.ErrBlocked))
	}
	// Output:
	// true false
	// false true
	// false true
	// false true
	// false false
	// false false
}

func ExampleClient_ValidateURL() {
	c, err := client.New(&client.Config{AllowOnion: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.ValidateURL("http://abcdefgh.onion/"))
	// Output: <nil>
}

func ExampleReadAll() {
	c, err := client.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "https://social.example/.well-known/nodeinfo", nil)
	resp, err := c.Do(req)
	if err != nil {
		log.Print(err)
		return
	}
	b, err := client.ReadAll(resp) // closes the body; a *TooLargeError past the cap
	if err != nil {
		log.Print(err)
		return
	}
	fmt.Println(len(b))
}

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

func ExampleClient_CloseIdleConnections() {
	c, err := client.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.CloseIdleConnections()
}
