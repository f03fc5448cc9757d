package deliver_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/delivertest"
	"github.com/fedkit/fedkit/internal/fedsim"
	"github.com/fedkit/fedkit/sig"
)

// simBundle is a Deliverer on a recording fedsim with the manual clock.
type simBundle struct {
	*bundle
	sim *fedsim.Sim
}

func setupSim(t *testing.T, edit func(*deliver.Config)) *simBundle {
	t.Helper()
	clk := newClock()
	sim, err := fedsim.New(&fedsim.Config{Record: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	b := &bundle{q: &deliver.MemoryQueue{}, keys: &keys{}, clock: clk, rec: &delivertest.Recorder{}}
	cfg := deliver.DefaultConfig()
	cfg.Now = clk.Now
	b.rec.Install(cfg)
	if edit != nil {
		edit(cfg)
	}
	b.cfg = cfg
	if b.d, err = deliver.New(b.q, b.keys, simClient(t, sim, 5*time.Second), cfg); err != nil {
		t.Fatal(err)
	}
	return &simBundle{bundle: b, sim: sim}
}

// check is a SignatureCheck with the test key and the bundle's clock.
func (b *simBundle) check(t *testing.T, c SignatureCheck) *SignatureCheck {
	t.Helper()
	v, err := sig.NewVerifier(resolver{pub: testKey.Public()}, &sig.VerifierConfig{Now: b.clock.Now, URLScheme: "http"})
	if err != nil {
		t.Fatal(err)
	}
	c.Verifier = v
	return &c
}

// deliverOne sends one activity to host and works it.
func (b *simBundle) deliverOne(t *testing.T, id, host string) {
	t.Helper()
	b.send(t, id, b.sim.URL(host, "/inbox"))
	b.runDue(t)
}

// schemes lists the schemes host's requests were signed with, in order.
func (b *simBundle) schemes(host string) []string {
	var out []string
	for _, r := range b.sim.Requests(host) {
		out = append(out, r.Scheme)
	}
	return out
}

// A host that demands, with Accept-Signature, components and a nonce the
// default signature lacks gets them on the second knock, and afterwards on
// the first: one request per delivery.
func TestAcceptSignatureNegotiatedOnFedsim(t *testing.T) {
	t.Parallel()
	b := setupSim(t, nil)
	const host = "strict.example"
	c := b.check(t, SignatureCheck{
		Schemes:         []sig.Scheme{sig.SchemeRFC9421},
		Require:         []string{"content-type", "@path"},
		RequireNonce:    true,
		AcceptSignature: `sig2=("@method" "@target-uri" "@path" "@authority" "content-type" "content-digest");created;nonce;alg="ed25519"`,
	})
	b.sim.SetHost(host, fedsim.Profile{Check: c.Check})
	b.deliverOne(t, "1", host)
	b.deliverOne(t, "2", host)
	if got, want := b.schemes(host), []string{"rfc9421", "rfc9421", "rfc9421"}; !slices.Equal(got, want) {
		t.Fatalf("requests %v, want a refused RFC 9421, the one signed as asked, then that one alone", got)
	}
	reqs := b.sim.Requests(host)
	if reqs[0].Status != 401 || reqs[1].Status != 202 || reqs[2].Status != 202 {
		t.Fatalf("statuses %d %d %d, want 401 202 202", reqs[0].Status, reqs[1].Status, reqs[2].Status)
	}
	for _, a := range b.rec.Attempts() {
		if a.Outcome != deliver.AttemptDelivered || a.Scheme != sig.SchemeRFC9421 {
			t.Fatalf("attempt %+v", a)
		}
	}
}

// An Accept-Signature that cannot be met (an algorithm the key does not
// do) leaves the ordinary second knock, the other scheme.
func TestAcceptSignatureUnmetFallsBackToOtherScheme(t *testing.T) {
	t.Parallel()
	b := setupSim(t, nil)
	const host = "rsa-only.example"
	c := b.check(t, SignatureCheck{
		Schemes:         []sig.Scheme{sig.SchemeCavage},
		AcceptSignature: `sig1=("@method" "@target-uri" "content-digest");created;alg="rsa-v1_5-sha256"`,
	})
	b.sim.SetHost(host, fedsim.Profile{Check: c.Check})
	b.deliverOne(t, "1", host)
	if got, want := b.schemes(host), []string{"rfc9421", "cavage"}; !slices.Equal(got, want) {
		t.Fatalf("requests %v, want %v", got, want)
	}
}

// With DisableNegotiation the Accept-Signature is ignored.
func TestDisableNegotiation(t *testing.T) {
	t.Parallel()
	b := setupSim(t, func(c *deliver.Config) { c.DisableNegotiation = true })
	const host = "strict.example"
	c := b.check(t, SignatureCheck{
		Schemes:         []sig.Scheme{sig.SchemeRFC9421},
		Require:         []string{"content-type"},
		AcceptSignature: `sig1=("@method" "@target-uri" "@authority" "content-type" "content-digest");created`,
	})
	b.sim.SetHost(host, fedsim.Profile{Check: c.Check})
	b.deliverOne(t, "1", host)
	if got, want := b.schemes(host), []string{"rfc9421", "cavage"}; !slices.Equal(got, want) {
		t.Fatalf("requests %v, want %v", got, want)
	}
	if f := b.rec.Failures(); len(f) != 1 {
		t.Fatalf("failures %+v, want the refusal", f)
	}
}

// A host remembered as RFC 9421 that stops reading it (a downgrade, a
// verifier switched off) falls back to draft-cavage on the same attempt,
// and cavage is remembered.
func TestRememberedRFC9421RefusedFallsBackAtOnce(t *testing.T) {
	t.Parallel()
	store := sig.NewHostSchemes(0)
	b := setupSim(t, func(c *deliver.Config) { c.Schemes = store })
	const host = "mastodon.example"
	both := b.check(t, SignatureCheck{})
	b.sim.SetHost(host, fedsim.Profile{Check: both.Check})
	b.deliverOne(t, "1", host) // Ed25519: RFC 9421 first, accepted and remembered
	cavageOnly := b.check(t, SignatureCheck{Schemes: []sig.Scheme{sig.SchemeCavage}})
	b.sim.SetHost(host, fedsim.Profile{Check: cavageOnly.Check})
	b.deliverOne(t, "2", host)
	b.deliverOne(t, "3", host)
	if got, want := b.schemes(host), []string{"rfc9421", "rfc9421", "cavage", "cavage"}; !slices.Equal(got, want) {
		t.Fatalf("requests %v, want %v", got, want)
	}
	if s, ok, _ := store.Scheme(context.Background(), strings.TrimPrefix(b.sim.URL(host, ""), "http://")); !ok || s != sig.SchemeCavage {
		t.Fatalf("remembered %v %v, want cavage", s, ok)
	}
	for _, a := range b.rec.Attempts() {
		if a.Outcome != deliver.AttemptDelivered {
			t.Fatalf("attempt %+v", a)
		}
	}
}

// twoKeys holds two keys of one actor document and a key of another actor.
type twoKeys struct{ ed, other crypto.Signer }

func (k twoKeys) Key(_ context.Context, keyID string) (crypto.Signer, error) {
	switch keyID {
	case testKeyID:
		return testKey, nil
	case testActor + "#ed-2":
		return k.ed, nil
	case "https://a.example/users/bob#main-key":
		return k.other, nil
	}
	return nil, errors.New("no such key")
}

func (twoKeys) Gone(context.Context, string) (bool, error) { return false, nil }

// An Accept-Signature may name another key of the sender's actor, which
// then signs; a key of another actor is never used, whatever SenderKeys
// holds: a remote must not choose whose key signs.
func TestAcceptSignatureKeyID(t *testing.T) {
	t.Parallel()
	_, ed2, _ := ed25519.GenerateKey(nil)
	_, bob, _ := ed25519.GenerateKey(nil)
	for _, tc := range []struct {
		name, keyID string
		want        []string
	}{
		{"same actor's other key", testActor + "#ed-2", []string{"rfc9421", "rfc9421"}},
		{"another actor's key", "https://a.example/users/bob#main-key", []string{"rfc9421", "cavage"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sim, err := fedsim.New(&fedsim.Config{Record: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = sim.Close() })
			var gotKey atomic.Value
			sim.SetHost("h.example", fedsim.Profile{Check: func(r *http.Request, _ []byte) (int, http.Header) {
				if sigs, err := sig.ParseRFC9421Signatures(r.Header); err == nil {
					gotKey.Store(sigs[0].KeyID)
					return 401, http.Header{"Accept-Signature": {`sig1=("@method" "@target-uri" "@authority" "content-digest");created;keyid="` + tc.keyID + `"`}}
				}
				return 0, nil
			}})
			ks := twoKeys{ed: ed2, other: bob}
			d, err := deliver.New(&deliver.MemoryQueue{}, ks, simClient(t, sim, 5*time.Second), nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Send(context.Background(), testKeyID, activity("1"), []string{sim.URL("h.example", "/inbox")}); err != nil {
				t.Fatal(err)
			}
			if _, err := d.RunDue(context.Background()); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range sim.Requests("h.example") {
				got = append(got, r.Scheme)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("requests %v, want %v", got, tc.want)
			}
			if tc.want[1] == "rfc9421" && gotKey.Load() != tc.keyID {
				t.Fatalf("second knock signed with %v, want %s", gotKey.Load(), tc.keyID)
			}
		})
	}
}
