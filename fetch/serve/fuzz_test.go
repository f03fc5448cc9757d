package serve_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/fetch/serve"
)

// FuzzAcctUser: WebFinger resources come from anyone's query string. A
// user found is never empty and never carries a separator.
func FuzzAcctUser(f *testing.F) {
	f.Fuzz(func(t *testing.T, resource, host string) {
		user, ok := serve.AcctUser(resource, host)
		if ok && (user == "" || strings.ContainsAny(user, "@/?#: ")) {
			t.Fatalf("AcctUser(%q, %q) = %q", resource, host, user)
		}
	})
}

// FuzzWantsActivityPub: an Accept header is anyone's; reading it never
// panics.
func FuzzWantsActivityPub(f *testing.F) {
	f.Fuzz(func(t *testing.T, accept string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept", accept)
		_ = serve.WantsActivityPub(r)
	})
}
