package directorytest_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a goroutine outlives the tests: StartTLS
// serves on loopback and the conformance suite holds self-renewing leases.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
