package fetch_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The KeyResolver fetches in goroutines detached from its callers: none
// may outlive its test. Idle keep-alive connections of the test clients
// are not the package's.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	)
}
