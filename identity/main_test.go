package identity_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Sweeps, locks and the offline network start goroutines; none may outlive
// the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
