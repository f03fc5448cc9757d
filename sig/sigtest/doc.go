// Package sigtest holds conformance suites for the interfaces package sig
// lets applications implement, so that every implementation is held to
// the same contract:
//
//	func TestMyNonceStore(t *testing.T) {
//		sigtest.TestNonceStore(t, func(tb testing.TB) sig.NonceStore { return newStore(tb) })
//	}
//
// TestSchemeStore is the suite of sig.SchemeStore, the memory of which
// scheme each host accepted, that deliver and fetch sign with;
// TestLearnedSchemeStore is the suite of sig.LearnedSchemeStore, the same
// memory with dates (sig/redisschemes and sig/pgschemes pass it), and
// includes TestSchemeStore.
//
// The suites take a testing.TB: under a *testing.T each case is a subtest,
// under any other testing.TB the cases run in line.
package sigtest
