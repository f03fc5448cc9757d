// Package identitytest is the offline test harness of identity: a Network
// (fake PLC directory and well-known server on one httptest listener, with a
// stub DNS TXT resolver), in-memory fakes of a Resolver and an application
// Store, and conformance suites every CacheStore and Lock must pass.
//
//	n := identitytest.NewNetwork(t)
//	n.Claim("did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", "alice.bridge.test", "https://pds.bridge.test")
//	res := n.Resolver(t) // an identity.HTTPResolver on the network
//
//	func TestMyStore(t *testing.T) {
//		identitytest.TestCacheStore(t, func(t testing.TB) identity.CacheStore { return newStore(t) })
//	}
//
// Nothing leaves the process: hosts the test did not configure answer 404,
// names without TXT records are NXDOMAIN.
package identitytest
