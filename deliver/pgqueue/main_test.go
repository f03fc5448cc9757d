package pgqueue_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Nothing this package starts (Notify, grouped Finish) may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
