package fetch_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/sig"
)

type signing struct {
	signer *sig.Signer
	ver    *sig.Verifier
}

func newSigning(t testing.TB) *signing {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	const keyID = "https://relay.test/actor#main-key"
	s, err := sig.NewSigner(priv, keyID, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := sig.NewVerifier(sig.KeyResolverFunc(func(ctx context.Context, id sig.KeyID) (*sig.Key, error) {
		if id.String() != keyID {
			return nil, errors.New("unknown key")
		}
		return &sig.Key{Public: pub, Owner: "https://relay.test/actor"}, nil
	}), &sig.VerifierConfig{URLScheme: "http"})
	if err != nil {
		t.Fatal(err)
	}
	return &signing{signer: s, ver: v}
}

// authorizedFetch serves doc only to requests signed with one of the
// accepted schemes, answering 401 otherwise, and records what it saw.
type authorizedFetch struct {
	mu      sync.Mutex
	schemes []string // per request: "cavage", "rfc9421", "none", "bad"
}

func (a *authorizedFetch) handler(s *signing, accept map[sig.Scheme]bool, doc string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		res, err := s.ver.Verify(r)
		name := "none"
		switch {
		case err == nil:
			name = res.Scheme.String()
		case !errors.Is(err, sig.ErrNoSignature):
			name = "bad"
		}
		a.mu.Lock()
		a.schemes = append(a.schemes, name)
		a.mu.Unlock()
		if err != nil || !accept[res.Scheme] {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/activity+json")
		_, _ = w.Write([]byte(doc))
	}
}

func (a *authorizedFetch) seen() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.schemes...)
}

func TestSignedFetch(t *testing.T) {
	t.Parallel()
	sg := newSigning(t)
	tests := []struct {
		name    string
		accept  map[sig.Scheme]bool
		first   sig.Scheme
		signer  bool
		lookups int
		want    string // schemes seen by the server, in order
		err     error  // any non-nil: a 401 is expected
	}{
		{"cavage accepted first", map[sig.Scheme]bool{sig.SchemeCavage: true}, sig.SchemeCavage, true, 2, "[cavage cavage]", nil},
		{"rfc9421-only server: knock twice, then remember", map[sig.Scheme]bool{sig.SchemeRFC9421: true}, sig.SchemeCavage, true, 3, "[cavage rfc9421 rfc9421 rfc9421]", nil},
		{"ed25519 key: rfc9421 first by default", map[sig.Scheme]bool{sig.SchemeRFC9421: true}, 0, true, 2, "[rfc9421 rfc9421]", nil},
		{"ed25519 key, cavage-only server: knock, then remember", map[sig.Scheme]bool{sig.SchemeCavage: true}, 0, true, 2, "[rfc9421 cavage cavage]", nil},
		{"first scheme rfc9421 configured", map[sig.Scheme]bool{sig.SchemeRFC9421: true}, sig.SchemeRFC9421, true, 1, "[rfc9421]", nil},
		{"cavage-only server with rfc9421 first", map[sig.Scheme]bool{sig.SchemeCavage: true}, sig.SchemeRFC9421, true, 2, "[rfc9421 cavage cavage]", nil},
		{"neither accepted", map[sig.Scheme]bool{}, sig.SchemeCavage, true, 1, "[cavage rfc9421]", fetch.ErrTemporary},
		{"unsigned without a signer", map[sig.Scheme]bool{sig.SchemeCavage: true}, 0, false, 1, "[none]", fetch.ErrTemporary},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSite(t, "secure.test")
			af := &authorizedFetch{}
			s.mux.HandleFunc("/note", af.handler(sg, tc.accept, s.expand(`{"id":"{base}/note","type":"Note"}`)))
			cfg := &fetch.Config{FirstScheme: tc.first}
			if tc.signer {
				cfg.Signer = sg.signer
			}
			f := newFetcher(t, cfg)
			var err error
			for range tc.lookups {
				_, err = f.Lookup(context.Background(), s.url("/note"))
			}
			if tc.err != nil {
				var se *fetch.StatusError
				if !errors.As(err, &se) || se.StatusCode != 401 {
					t.Fatalf("err = %v, want 401", err)
				}
			} else if err != nil {
				t.Fatalf("Lookup: %v", err)
			}
			if got := fmtList(af.seen()); got != tc.want {
				t.Errorf("server saw %s, want %s", got, tc.want)
			}
		})
	}
}

func fmtList(s []string) string {
	out := "["
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out + "]"
}

func TestSignedFetchReSignsRedirectHops(t *testing.T) {
	t.Parallel()
	sg := newSigning(t)
	s := newSite(t, "secure.test")
	af := &authorizedFetch{}
	s.mux.HandleFunc("/note", af.handler(sg, map[sig.Scheme]bool{sig.SchemeCavage: true}, s.expand(`{"id":"{base}/note","type":"Note"}`)))
	s.mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		if _, err := sg.ver.Verify(r); err != nil {
			w.WriteHeader(401)
			return
		}
		http.Redirect(w, r, "/note", http.StatusMovedPermanently)
	})
	f := newFetcher(t, &fetch.Config{Signer: sg.signer, FirstScheme: sig.SchemeCavage})
	d, err := f.Lookup(context.Background(), s.url("/old"))
	if err != nil {
		t.Fatal(err)
	}
	// A signature over /old would not verify at /note: the hop was re-signed.
	if fmtList(af.seen()) != "[cavage]" || d.URL.Path != "/note" {
		t.Fatalf("seen %v, URL %s", af.seen(), d.URL)
	}
}

func TestWithSigner(t *testing.T) {
	t.Parallel()
	sg := newSigning(t)
	s := newSite(t, "secure.test")
	af := &authorizedFetch{}
	s.mux.HandleFunc("/note", af.handler(sg, map[sig.Scheme]bool{sig.SchemeRFC9421: true}, s.expand(`{"id":"{base}/note","type":"Note"}`)))
	store := sig.NewHostSchemes(0)
	unsigned := newFetcher(t, &fetch.Config{Schemes: store})
	if _, err := unsigned.Lookup(context.Background(), s.url("/note")); err == nil {
		t.Fatal("unsigned fetch accepted")
	}
	signed := unsigned.WithSigner(sg.signer)
	if _, err := signed.Lookup(context.Background(), s.url("/note")); err != nil {
		t.Fatal(err)
	}
	// The scheme learned is shared with the original Fetcher's store.
	if sc, ok, _ := store.Scheme(context.Background(), s.host); !ok || sc != sig.SchemeRFC9421 {
		t.Fatalf("store has %v, %v", sc, ok)
	}
	// An Ed25519 signer knocks with RFC 9421 first.
	if fmtList(af.seen()) != "[none rfc9421]" {
		t.Fatalf("seen %v", af.seen())
	}
}

// A nil *sig.Signer in the interface is a typed nil: it must mean unsigned,
// not a nil-pointer panic inside the first signed fetch.
func TestTypedNilSigner(t *testing.T) {
	t.Parallel()
	s := newSite(t, "open.test")
	s.ap("/note", `{"id":"{base}/note","type":"Note"}`)
	var nilSigner *sig.Signer
	f := newFetcher(t, &fetch.Config{Signer: nilSigner})
	if _, err := f.Lookup(context.Background(), s.url("/note")); err != nil {
		t.Fatalf("Config.Signer typed nil: %v", err)
	}
	if _, err := f.WithSigner(nilSigner).Lookup(context.Background(), s.url("/note")); err != nil {
		t.Fatalf("WithSigner typed nil: %v", err)
	}
}
