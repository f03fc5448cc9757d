// Package storetest is the conformance suite every store.Store passes.
//
//	func TestMyStore(t *testing.T) {
//		storetest.TestStore(t, func(t *testing.T) store.Store { return newEmptyStore(t) })
//	}
package storetest
