package identity_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
)

// An application store that also implements identity.PDSSetter has its
// stored PDS URL kept current by every verified refresh.
func ExamplePDSSetter() {
	st := &pdsStore{Store: identitytest.NewStore()}
	res := identitytest.NewResolver()
	r, _ := identity.NewRefresher(res, st, &identity.RefresherConfig{Lock: identity.NewMemoryLock(time.Second)})

	st.Put(identity.Subject{DID: identitytest.DIDAlice, Kind: identity.KindUser, Handle: "alice.bridge.test", PDS: "https://pds.bridge.test"})
	res.Set(identity.Identity{DID: identitytest.DIDAlice, Handle: "alice.example.test", DeclaredHandle: "alice.example.test", PDS: "https://pds.example.test"})
	if err := r.RefreshHandle(context.Background(), identitytest.DIDAlice); err != nil {
		panic(err)
	}
	row, _ := st.Row(identitytest.DIDAlice)
	fmt.Println(row.Handle, row.PDS)
	// Output: alice.example.test https://pds.example.test
}
