package main

import (
	"testing"

	"go.uber.org/goleak"
)

// The relay starts deliverers, schedulers, pools and servers: none may
// outlive its test. Idle keep-alive connections of the test's own plain HTTP
// client are not the relay's.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	)
}
