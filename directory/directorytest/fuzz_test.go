package directorytest_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/directory/directorytest"
)

// FuzzServeHTTP: whatever body arrives, the fake answers a closed error
// envelope (never a success without a valid signature) and never panics.
func FuzzServeHTTP(f *testing.F) {
	f.Add("/v1/relays/heartbeat", []byte(v1hb))
	f.Add("/v3/relays/heartbeat", []byte(v3hb))
	f.Add("/v2/relays/register", []byte(`{"protocol_version":2,"operation":"register","profile":{"a":1,"a":2}}`))
	// The real server's rate limits would answer most of a fuzzing run
	// 429 before reading the body; the parsing is what is fuzzed here.
	s := directorytest.New(&directorytest.Config{DisableRateLimits: true})
	f.Fuzz(func(t *testing.T, path string, body []byte) {
		u, err := url.Parse("https://directory.example" + path)
		if err != nil || !strings.HasPrefix(path, "/") {
			return
		}
		r, err := http.NewRequest(http.MethodPost, u.String(), strings.NewReader(string(body)))
		if err != nil {
			return
		}
		r.RequestURI = u.RequestURI()
		r.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		switch rec.Code {
		case 400, 401, 404, 413:
		default:
			t.Fatalf("unsigned request got %d", rec.Code)
		}
	})
}
