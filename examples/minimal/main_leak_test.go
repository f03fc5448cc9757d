package main

import (
	"testing"

	"go.uber.org/goleak"
)

// Deliverers, servers and key fetches must not outlive the test.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	)
}
