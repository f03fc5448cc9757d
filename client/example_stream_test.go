package client_test

import (
	"context"
	"log"
	"net/http"

	"github.com/fedkit/fedkit/client"
)

// ExampleClient_DoWith_stream fetches a media file: the URL, the addresses
// and the redirects are checked, the body is not capped.
func ExampleClient_DoWith_stream() {
	c, err := client.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "https://files.social.example/video.mp4", nil)
	resp, err := c.DoWith(req, &client.DoOpts{Stream: true})
	if err != nil {
		log.Print(err)
		return
	}
	defer resp.Body.Close()
	// io.Copy(dst, resp.Body)
}
