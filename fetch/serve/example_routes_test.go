package serve_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"net/http"

	"github.com/fedkit/fedkit/fetch/serve"
)

// ExampleRoutes mounts actors, their inboxes and WebFinger in one call.
func ExampleRoutes() {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	alice, _ := serve.NewActor(&serve.ActorOpts{ID: "https://social.example/users/alice", Username: "alice", Key: &serve.ActorKey{Public: pub}})
	var in http.Handler = http.NotFoundHandler() // an *inbox.Handler
	mux, err := serve.Routes(in, alice)
	if err != nil {
		panic(err)
	}
	mux.Handle(serve.HostMetaPath, serve.HostMeta("https://social.example"))
	_ = http.ListenAndServe("127.0.0.1:8080", mux)
}
