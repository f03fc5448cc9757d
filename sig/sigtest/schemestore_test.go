package sigtest_test

import (
	"testing"

	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/sigtest"
)

func TestHostSchemesConformance(t *testing.T) {
	sigtest.TestLearnedSchemeStore(t, func(testing.TB) sig.LearnedSchemeStore { return sig.NewHostSchemes(0) })
}

// inlineTB is a testing.TB that is not a *testing.T, as a benchmark's or
// a caller's own would be.
type inlineTB struct{ testing.TB }

// Under any other testing.TB the suites run their cases in line.
func TestConformanceInline(t *testing.T) {
	sigtest.TestLearnedSchemeStore(inlineTB{t}, func(testing.TB) sig.LearnedSchemeStore { return sig.NewHostSchemes(0) })
	sigtest.TestNonceStore(inlineTB{t}, func(testing.TB) sig.NonceStore { return sig.NewMemoryNonceStore(nil) })
}

func ExampleTestSchemeStore() {
	// In a _test.go file of the package implementing the store:
	//
	//	func TestStore(t *testing.T) {
	//		sigtest.TestSchemeStore(t, func(tb testing.TB) sig.SchemeStore { return newStore(tb) })
	//	}
}

func ExampleTestLearnedSchemeStore() {
	_ = func(t *testing.T) {
		sigtest.TestLearnedSchemeStore(t, func(testing.TB) sig.LearnedSchemeStore { return sig.NewHostSchemes(0) })
	}
}
