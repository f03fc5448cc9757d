package inbox_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/inbox"
)

// ExampleNewAuthorizedFetch requires signed GETs of ActivityPub documents,
// as a server in secure mode does.
func ExampleNewAuthorizedFetch() {
	var keys sig.KeyResolver // a *fetch.KeyResolver
	mux := http.NewServeMux()
	h, err := inbox.NewAuthorizedFetch(keys, mux, &inbox.AuthorizedFetchConfig{
		// Servers fetch the instance actor to check our own signed GETs.
		Allow: func(r *http.Request) bool { return r.URL.Path == "/actor" },
	})
	if err != nil {
		return
	}
	mux.HandleFunc("GET /users/{name}", func(w http.ResponseWriter, r *http.Request) {
		if s, ok := inbox.SignerFromContext(r.Context()); ok {
			_ = s.Owner // the fetching actor: check it against blocks
		}
	})
	_ = http.ListenAndServe("127.0.0.1:8080", h)
}

// ExampleWantsActivityPub tells an ActivityPub GET (serve the JSON
// document) from a browser's (serve the HTML page).
func ExampleWantsActivityPub() {
	r := httptest.NewRequest(http.MethodGet, "https://local.example/users/alice", nil)
	r.Header.Set("Accept", `application/ld+json; profile="https://www.w3.org/ns/activitystreams"`)
	fmt.Println(inbox.WantsActivityPub(r))
	r.Header.Set("Accept", "text/html,application/xhtml+xml")
	fmt.Println(inbox.WantsActivityPub(r))
	// Output:
	// true
	// false
}
