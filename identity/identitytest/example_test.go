package identitytest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
)

func ExampleNewNetwork() {
	var t testing.TB // the test's *testing.T
	n := identitytest.NewNetwork(t)
	n.Claim("did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", "alice.bridge.test", "https://pds.bridge.test")
	n.DNS.Fail("bob.bridge.test") // SERVFAIL: not authoritative
	id, err := n.Resolver(t).LookupDID(context.Background(), "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa")
	fmt.Println(id.Handle, err, n.WellKnownHits("alice.bridge.test"))
}

func ExampleTestCacheStore() {
	// In a backend's tests:
	_ = func(t *testing.T) {
		identitytest.TestCacheStore(t, func(testing.TB) identity.CacheStore { return &identity.MemoryCacheStore{} })
	}
}

func ExampleTestLock() {
	_ = func(t *testing.T) {
		identitytest.TestLock(t, func(_ testing.TB, wait time.Duration) identity.Lock { return identity.NewMemoryLock(wait) })
	}
}

func ExampleNewStore() {
	s := identitytest.NewStore()
	s.Put(identity.Subject{DID: identitytest.DIDAlice, Kind: identity.KindUser, Handle: "alice.bridge.test"})
	_, err := s.Subject(context.Background(), identitytest.DIDBob)
	fmt.Println(s.Reads(), err)
	// Output: 1 identity: unknown DID
}

func ExampleNewResolver() {
	r := identitytest.NewResolver()
	r.Set(identity.Identity{DID: identitytest.DIDAlice, Handle: "alice.bridge.test"})
	id, _ := r.LookupDID(context.Background(), identitytest.DIDAlice)
	fmt.Println(id.Handle, r.Calls(identitytest.DIDAlice))
	// Output: alice.bridge.test 1
}

func ExampleNewStaleResolver() {
	r := identitytest.NewResolver()
	r.Set(identity.Identity{DID: identitytest.DIDAlice, Handle: "old.bridge.test"})
	stale := identitytest.NewStaleResolver(r)
	got := make(chan identity.Handle)
	go func() {
		id, _ := stale.LookupDID(context.Background(), identitytest.DIDAlice)
		got <- id.Handle
	}()
	<-stale.Resolved // the answer is taken; now the rename happens
	r.Set(identity.Identity{DID: identitytest.DIDAlice, Handle: "new.bridge.test"})
	close(stale.Release)
	fmt.Println(<-got)
	// Output: old.bridge.test
}

func ExampleHoldLock() {
	_ = func(t *testing.T) {
		l := identity.NewMemoryLock(50 * time.Millisecond)
		release := identitytest.HoldLock(t, l, identitytest.DIDAlice)
		defer release()
		err := l.WithLock(context.Background(), identitytest.DIDAlice, func(context.Context) error { return nil })
		fmt.Println(errors.Is(err, identity.ErrLockBusy)) // true
	}
}

func ExampleNewDNS() {
	d := identitytest.NewDNS()
	d.Claim("alice.bridge.test", string(identitytest.DIDAlice))
	d.Fail("bob.bridge.test")
	recs, err := d.LookupTXT(context.Background(), "_atproto.alice.bridge.test")
	fmt.Println(recs, err)
	_, err = d.LookupTXT(context.Background(), "_atproto.bob.bridge.test")
	fmt.Println(err != nil, d.Hits("bob.bridge.test"))
	// Output:
	// [did=did:plc:aaaaaaaaaaaaaaaaaaaaaaaa] <nil>
	// true 1
}

func ExampleDoc() {
	body := identitytest.Doc(string(identitytest.DIDAlice), "alice.bridge.test", "https://pds.bridge.test")
	id, err := identity.ParseDocument(identitytest.DIDAlice, body)
	fmt.Println(id.DeclaredHandle, id.PDS, err)
	// Output: alice.bridge.test https://pds.bridge.test <nil>
}

func ExampleClientConfig() {
	cfg := identitytest.ClientConfig()
	// Loopback is admitted for the test listener; no host name resolves.
	_, err := cfg.Resolver.LookupNetIP(context.Background(), "ip", "plc.bridge.test")
	fmt.Println(cfg.AllowPrivate, err != nil)
	// Output: [127.0.0.0/8] true
}
