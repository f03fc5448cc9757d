package inbox

import (
	"net/http/httptest"
	"testing"
)

// FuzzParseActivity: the inbox's reader of untrusted bodies never panics,
// and what it accepts has a type and one actor.
func FuzzParseActivity(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		_, a, err := parseActivity(body)
		if err != nil {
			return
		}
		if a.Type == "" || a.Actor == "" {
			t.Fatalf("accepted %+v", a)
		}
	})
}

// FuzzWantsActivityPub: an Accept header is anyone's; reading it never
// panics.
func FuzzWantsActivityPub(f *testing.F) {
	f.Fuzz(func(t *testing.T, accept string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept", accept)
		_ = WantsActivityPub(r)
	})
}
