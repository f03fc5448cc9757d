package sigtest_test

import (
	"testing"

	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/sigtest"
)

func TestHostSchemesConformance(t *testing.T) {
	sigtest.TestLearnedSchemeStore(t, func(t *testing.T) sig.LearnedSchemeStore { return sig.NewHostSchemes(0) })
}

func ExampleTestLearnedSchemeStore() {
	_ = func(t *testing.T) {
		sigtest.TestLearnedSchemeStore(t, func(t *testing.T) sig.LearnedSchemeStore { return sig.NewHostSchemes(0) })
	}
}
