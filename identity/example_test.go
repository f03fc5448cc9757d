package identity_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
)

func ExampleParseDID() {
	d, err := identity.ParseDID("did:plc:ewvi7nxzyoun6zhxrhs64oiz")
	fmt.Println(d, d.Method(), err)
	_, err = identity.ParseDID("did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK")
	fmt.Println(errors.Is(err, identity.ErrInvalidDID))
	// Output:
	// did:plc:ewvi7nxzyoun6zhxrhs64oiz plc <nil>
	// true
}

func ExampleParseHandle() {
	h, _ := identity.ParseHandle("Alice.Lemmy.World.AP.tdpl.io")
	fmt.Println(h, h.Resolvable())
	h, _ = identity.ParseHandle("printer.local")
	fmt.Println(h, h.Resolvable())
	// Output:
	// alice.lemmy.world.ap.tdpl.io true
	// printer.local false
}

func ExampleParseDocument() {
	doc := identitytest.Doc("did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", "alice.bridge.test", "https://pds.bridge.test")
	id, _ := identity.ParseDocument("did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", doc)
	fmt.Println(id.DeclaredHandle, id.PDS, id.Handle)
	// Output: alice.bridge.test https://pds.bridge.test handle.invalid
}

func ExampleVerifiedHandle() {
	id := &identity.Identity{DID: "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", Handle: "alice.bridge.test"}
	h, err := identity.VerifiedHandle(id, "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa")
	fmt.Println(h, err)
	_, err = identity.VerifiedHandle(id, "did:plc:bbbbbbbbbbbbbbbbbbbbbbbb")
	fmt.Println(errors.Is(err, identity.ErrSubjectMismatch))
	// Output:
	// alice.bridge.test <nil>
	// true
}

func ExampleNewResolver() {
	c, err := client.New(nil)
	if err != nil {
		panic(err)
	}
	// net.DefaultResolver answers the _atproto TXT lookups.
	res, err := identity.NewResolver(c, net.DefaultResolver, nil)
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	id, err := res.LookupDID(ctx, "did:plc:ewvi7nxzyoun6zhxrhs64oiz")
	if err != nil {
		panic(err)
	}
	fmt.Println(id.Handle, id.PDS)
}

func ExampleNewCache() {
	inner := identitytest.NewResolver()
	inner.Set(identity.Identity{DID: "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", Handle: "alice.bridge.test"})
	cache, _ := identity.NewCache(inner, &identity.MemoryCacheStore{}, nil)
	ctx := context.Background()
	for range 3 {
		_, _ = cache.LookupDID(ctx, "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa")
	}
	_ = cache.PurgeHandle(ctx, "alice.bridge.test")
	_, _ = cache.LookupDID(ctx, "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa")
	fmt.Println("inner lookups:", inner.TotalCalls())
	// Output: inner lookups: 2
}

func ExampleNewRefresher() {
	res := identitytest.NewResolver() // production: an *identity.HTTPResolver
	res.Set(identity.Identity{DID: "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", Handle: "alice.lemmy.world.ap.bridge.test",
		DeclaredHandle: "alice.lemmy.world.ap.bridge.test", PDS: "https://pds.bridge.test"})
	store := identitytest.NewStore() // production: the application's tables
	store.Put(identity.Subject{DID: "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", Kind: identity.KindUser, Handle: "alice.lemmy-world.bridge.test"})

	ref, _ := identity.NewRefresher(res, store, &identity.RefresherConfig{
		Lock:         identity.NewMemoryLock(0), // production: pgstore.NewLock
		TrustedHosts: []string{"pds.bridge.test"},
	})
	err := ref.RefreshHandle(context.Background(), "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa")
	row, _ := store.Row("did:plc:aaaaaaaaaaaaaaaaaaaaaaaa")
	fmt.Println(row.Handle, err)
	// Output: alice.lemmy.world.ap.bridge.test <nil>
}

func ExampleRefresher_HandleIdentityEvent() {
	ref, _ := identity.NewRefresher(identitytest.NewResolver(), identitytest.NewStore(),
		&identity.RefresherConfig{Lock: identity.NewMemoryLock(0)})
	frame := []byte(`{"did":"did:plc:g4ut2w5755qxi3fe7mfs72p4","time_us":1779719010267528,"kind":"identity","identity":{"did":"did:plc:g4ut2w5755qxi3fe7mfs72p4","seq":30340180350,"time":"2026-05-25T14:23:29.950Z"}}`)
	ev, err := identity.DecodeIdentityEvent(frame)
	if err != nil {
		panic(err)
	}
	// Unknown to the store: ignored after one read, nothing resolved.
	fmt.Println(ref.HandleIdentityEvent(context.Background(), ev))
	// Output: <nil>
}

func ExampleDecodeIdentityEvent() {
	ev, err := identity.DecodeIdentityEvent([]byte(`{"did":"did:plc:g4ut2w5755qxi3fe7mfs72p4","kind":"identity","identity":{"did":"did:plc:g4ut2w5755qxi3fe7mfs72p4","seq":30340180350,"time":"2026-05-25T14:23:29.950Z"}}`))
	fmt.Println(ev.DID, ev.Seq, ev.Time.Format(time.RFC3339Nano), err)
	_, err = identity.DecodeIdentityEvent([]byte(`{"did":"did:plc:g4ut2w5755qxi3fe7mfs72p4","kind":"account","account":{"active":true}}`))
	fmt.Println(errors.Is(err, identity.ErrNotIdentityEvent))
	// Output:
	// did:plc:g4ut2w5755qxi3fe7mfs72p4 30340180350 2026-05-25T14:23:29.95Z <nil>
	// true
}

func ExampleRefresher_Sweep() {
	res := identitytest.NewResolver()
	store := identitytest.NewStore() // also an identity.Lister
	for _, u := range []struct{ did, stored, now string }{
		{"did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", "alice.old.bridge.test", "alice.new.bridge.test"},
		{"did:plc:bbbbbbbbbbbbbbbbbbbbbbbb", "bob.bridge.test", "bob.bridge.test"},
	} {
		store.Put(identity.Subject{DID: identity.DID(u.did), Kind: identity.KindUser, Handle: identity.Handle(u.stored), PDS: "https://pds.bridge.test"})
		res.Set(identity.Identity{DID: identity.DID(u.did), Handle: identity.Handle(u.now), PDS: "https://pds.bridge.test"})
	}
	ref, _ := identity.NewRefresher(res, store, &identity.RefresherConfig{
		Lock: identity.NewMemoryLock(0), TrustedHosts: []string{"pds.bridge.test"},
	})
	rep, _ := ref.Sweep(context.Background(), store, &identity.SweepOpts{DryRun: true})
	fmt.Println(rep.Counts()[identity.ReasonWouldUpdate], rep.Counts()[identity.ReasonMatched], rep.AllMatched())
	rep, _ = ref.Sweep(context.Background(), store, nil)
	fmt.Println(rep.Counts()[identity.ReasonUpdated], rep.AllMatched())
	// Output:
	// 1 1 false
	// 1 true
}

func ExampleNewMemoryLock() {
	lock := identity.NewMemoryLock(time.Second)
	err := lock.WithLock(context.Background(), "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", func(context.Context) error {
		fmt.Println("holding the lock")
		return nil
	})
	fmt.Println(err)
	// Output:
	// holding the lock
	// <nil>
}

func ExampleNewOriginResolver() {
	fake := identitytest.NewResolver() // production: pass the *identity.HTTPResolver itself
	fake.Set(identity.Identity{DID: "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", Handle: "alice.bridge.test",
		DeclaredHandle: "alice.bridge.test", PDS: "https://pds.bridge.test"})
	fresh, _ := identity.NewOriginResolver(fake)
	r, _ := fresh.ResolveFresh(context.Background(), "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa")
	fmt.Println(r.Handle, r.HandleDID, r.PDS)
	// Output: alice.bridge.test did:plc:aaaaaaaaaaaaaaaaaaaaaaaa https://pds.bridge.test
}

func ExampleHTTPResolver_ResolveHandle() {
	c, _ := client.New(nil)
	res, _ := identity.NewResolver(c, net.DefaultResolver, &identity.ResolverConfig{PLCURL: "https://plc.directory"})
	did, err := res.ResolveHandle(context.Background(), "atproto.com")
	switch {
	case errors.Is(err, identity.ErrHandleNotFound): // authoritative: no such handle
	case err != nil: // transient: DNS SERVFAIL, timeouts
	}
	fmt.Println(did)
}

func ExampleRefresher_HandleAccountEvent() {
	store := identitytest.NewStore()
	store.Put(identity.Subject{DID: "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", Kind: identity.KindUser, HasOrigin: true})
	ref, _ := identity.NewRefresher(identitytest.NewResolver(), store, &identity.RefresherConfig{Lock: identity.NewMemoryLock(0)})
	err := ref.HandleAccountEvent(context.Background(), identity.AccountEvent{DID: "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", Status: "takendown"})
	_, cleared := store.Origin("did:plc:aaaaaaaaaaaaaaaaaaaaaaaa")
	fmt.Println(cleared, err)
	// Output: true <nil>
}

// A host removed from the trusted list: its rows are no longer listed as
// bridged, and an OriginLister (identitytest.Store is one) hands the sweep
// those still holding origin fields, which are cleared when the fresh
// resolution is off the bridge.
func ExampleOriginLister() {
	res := identitytest.NewResolver()
	store := identitytest.NewStore() // an identity.Lister and OriginLister
	did := identity.DID("did:plc:aaaaaaaaaaaaaaaaaaaaaaaa")
	store.Put(identity.Subject{DID: did, Kind: identity.KindUser, Handle: "alice.old.test", PDS: "https://pds.old.test", HasOrigin: true})
	res.Set(identity.Identity{DID: did, Handle: "alice.old.test", PDS: "https://pds.old.test"})
	ref, _ := identity.NewRefresher(res, store, &identity.RefresherConfig{
		Lock: identity.NewMemoryLock(time.Second), TrustedHosts: []string{"pds.bridge.test"}, // pds.old.test removed
	})
	rep, _ := ref.Sweep(context.Background(), store, nil)
	row := rep.Rows[0]
	fmt.Println(row.Reason, row.OffList, row.OriginCleared)
	// Output:
	// matched true true
}
