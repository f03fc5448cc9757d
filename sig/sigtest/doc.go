// Package sigtest holds conformance suites for the interfaces package sig
// lets applications implement, so that every implementation is held to
// the same contract:
//
//	func TestMyNonceStore(t *testing.T) {
//		sigtest.TestNonceStore(t, func(t *testing.T) sig.NonceStore { return newStore(t) })
//	}
//
// TestLearnedSchemeStore is the suite of sig.LearnedSchemeStore, the scheme
// memory with dates (sig/redisschemes and sig/pgschemes pass it).
package sigtest
