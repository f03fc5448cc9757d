// Package sigtest holds conformance suites for the interfaces package sig
// lets applications implement, so that every implementation is held to
// the same contract:
//
//	func TestMyNonceStore(t *testing.T) {
//		sigtest.TestNonceStore(t, func(t *testing.T) sig.NonceStore { return newStore(t) })
//	}
package sigtest
