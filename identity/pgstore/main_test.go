package pgstore_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Lock holders and pools start goroutines; none may outlive the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
