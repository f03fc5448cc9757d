package identity_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
)

// pdsStore is identitytest.Store plus the optional PDSSetter.
type pdsStore struct {
	*identitytest.Store
	mu    sync.Mutex
	calls []string
	err   error
}

var _ identity.PDSSetter = (*pdsStore)(nil)

func (p *pdsStore) SetPDS(_ context.Context, s identity.Subject, pds string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, string(s.DID)+" "+pds)
	if p.err != nil {
		return p.err
	}
	row, ok := p.Row(s.DID)
	if !ok {
		return identity.ErrUnknownDID
	}
	row.PDS = pds
	p.Put(row)
	return nil
}

func (p *pdsStore) setCalls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.calls)
}

const (
	pdsBridge    = "https://pds.bridge.test"
	pdsElsewhere = "https://pds.elsewhere.test"
)

func pdsSetup(t *testing.T) (*pdsStore, *identitytest.Resolver, *identity.Refresher) {
	t.Helper()
	st := &pdsStore{Store: identitytest.NewStore()}
	res := identitytest.NewResolver()
	r, err := identity.NewRefresher(res, st, &identity.RefresherConfig{
		Lock: identity.NewMemoryLock(time.Second), TrustedHosts: []string{"pds.bridge.test"},
		Community: acceptHooks{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return st, res, r
}

func pdsIdent(did identity.DID, h identity.Handle, pds string) identity.Identity {
	return identity.Identity{DID: did, Handle: h, DeclaredHandle: h, PDS: pds}
}

func TestRefreshSetsPDS(t *testing.T) {
	t.Parallel()
	alice := identitytest.DIDAlice
	tests := []struct {
		name      string
		fresh     identity.Identity
		setErr    error
		wantPDS   string
		wantCalls int
		wantErr   string // a Reason, "" for success
	}{
		{"left the bridge with a new handle", pdsIdent(alice, "alice.elsewhere.test", pdsElsewhere), nil, pdsElsewhere, 1, ""},
		{"moved PDS, same handle", pdsIdent(alice, "alice.bridge.test", pdsElsewhere), nil, pdsElsewhere, 1, ""},
		{"PDS unchanged: no write", pdsIdent(alice, "alice.bridge.test", pdsBridge), nil, pdsBridge, 0, ""},
		{"document names no PDS", pdsIdent(alice, "alice.bridge.test", ""), nil, "", 1, ""},
		{"unverified handle writes nothing", pdsIdent(alice, identity.HandleInvalid, pdsElsewhere), nil, pdsBridge, 0, identity.ReasonUnverified},
		{"SetPDS failure is redriven", pdsIdent(alice, "alice.bridge.test", pdsElsewhere), errors.New("db down"), pdsBridge, 1, identity.ReasonStoreFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, res, r := pdsSetup(t)
			st.err = tc.setErr
			st.Put(identity.Subject{DID: alice, Kind: identity.KindUser, Handle: "alice.bridge.test", PDS: pdsBridge})
			res.Set(tc.fresh)
			err := r.RefreshHandle(context.Background(), alice)
			var re *identity.RefreshError
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("RefreshHandle: %v", err)
			case tc.wantErr != "" && (!errors.As(err, &re) || re.Reason != tc.wantErr || !errors.Is(err, identity.ErrUnresolved)):
				t.Fatalf("RefreshHandle = %v, want reason %s", err, tc.wantErr)
			}
			row, _ := st.Row(alice)
			if row.PDS != tc.wantPDS || st.setCalls() != tc.wantCalls {
				t.Fatalf("stored PDS %q after %d SetPDS calls; want %q after %d", row.PDS, st.setCalls(), tc.wantPDS, tc.wantCalls)
			}
		})
	}
}

// A row that left the bridge is swept once, gets its fresh PDS and loses its
// origin fields, and the next sweep no longer selects it.
func TestSweepStopsSelectingRowThatLeftBridge(t *testing.T) {
	t.Parallel()
	st, res, r := pdsSetup(t)
	alice, bob := identitytest.DIDAlice, identitytest.DIDBob
	st.Put(identity.Subject{DID: alice, Kind: identity.KindCommunity, Handle: "alice.bridge.test", PDS: pdsBridge, HasOrigin: true})
	st.Put(identity.Subject{DID: bob, Kind: identity.KindUser, Handle: "bob.bridge.test", PDS: pdsBridge})
	res.Set(pdsIdent(alice, "alice.elsewhere.test", pdsElsewhere))
	res.Set(pdsIdent(bob, "bob.bridge.test", pdsBridge))
	rep, err := r.Sweep(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 2 || !rep.AllMatched() {
		t.Fatalf("first sweep rows = %+v", rep.Rows)
	}
	row, _ := st.Row(alice)
	if row.PDS != pdsElsewhere || row.Handle != "alice.elsewhere.test" || row.HasOrigin {
		t.Fatalf("alice after sweep = %+v", row)
	}
	rep, err = r.Sweep(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 1 || rep.Rows[0].DID != bob {
		t.Fatalf("second sweep rows = %+v, want bob only", rep.Rows)
	}
}

// acceptHooks accepts every community handle.
type acceptHooks struct{}

func (acceptHooks) ValidateHandle(identity.Handle) error { return nil }
func (acceptHooks) CheckHostedBy(context.Context, identity.Subject, *identity.Identity) error {
	return nil
}
