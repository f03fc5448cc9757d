package fetch_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/sig"
)

// Signed GETs double-knock as real servers answer (spec section 11); each
// peer below plays one server's verifier.

// peerSite serves /note to signed GETs, answering as peer decides for the
// scheme that signed each request ("cavage", "rfc9421", "bad") and the
// cavage algorithm; it records the schemes in order.
type peerSite struct {
	mu   sync.Mutex
	seen []string
}

func (p *peerSite) handler(s *signing, doc string, peer func(scheme, alg string) int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := "bad"
		if res, err := s.ver.Verify(r); err == nil {
			name = res.Scheme.String()
		}
		alg := ""
		if i := strings.Index(r.Header.Get("Signature"), `algorithm="`); i >= 0 {
			alg = strings.SplitN(r.Header.Get("Signature")[i+len(`algorithm="`):], `"`, 2)[0]
		}
		p.mu.Lock()
		p.seen = append(p.seen, name)
		p.mu.Unlock()
		if code := peer(name, alg); code != http.StatusOK {
			w.WriteHeader(code)
			return
		}
		w.Header().Set("Content-Type", "application/activity+json")
		_, _ = w.Write([]byte(doc))
	}
}

func (p *peerSite) got() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmtList(p.seen)
}

// goToSocialGET reads draft-cavage only: any RFC 9421 signature gets 401.
func goToSocialGET(scheme, _ string) int {
	if scheme != "cavage" {
		return http.StatusUnauthorized
	}
	return http.StatusOK
}

// peerTubeGET reads draft-cavage only and answers 403 to RFC 9421.
func peerTubeGET(scheme, _ string) int {
	switch scheme {
	case "cavage":
		return http.StatusOK
	case "rfc9421":
		return http.StatusForbidden
	}
	return http.StatusUnauthorized
}

// fedifyGET reads both, but its cavage verifier is RSA-only: an Ed25519
// cavage signature throws, answered with 500.
func fedifyGET(scheme, alg string) int {
	if scheme == "cavage" && alg == sig.CavageEd25519 {
		return http.StatusInternalServerError
	}
	if scheme == "bad" {
		return http.StatusUnauthorized
	}
	return http.StatusOK
}

func peerFetch(t *testing.T, cfg *fetch.Config, peer func(scheme, alg string) int, lookups int) (seen string, err error) {
	t.Helper()
	sg := newSigning(t)
	s := newSite(t, "peer.test")
	p := &peerSite{}
	s.mux.HandleFunc("/note", p.handler(sg, s.expand(`{"id":"{base}/note","type":"Note"}`), peer))
	cfg.Signer = sg.signer
	f := newFetcher(t, cfg)
	for range lookups {
		if _, err = f.Lookup(context.Background(), s.url("/note")); err != nil {
			break
		}
	}
	return p.got(), err
}

func TestPeerTubeSignedFetch403ToRFC9421GetsCavageKnock(t *testing.T) {
	t.Parallel()
	seen, err := peerFetch(t, &fetch.Config{FirstScheme: sig.SchemeRFC9421}, peerTubeGET, 2)
	if err != nil || seen != "[rfc9421 cavage cavage]" {
		t.Fatalf("seen %s, err %v; want [rfc9421 cavage cavage]", seen, err)
	}
}

func TestFedifySignedFetchEd25519SignsRFC9421First(t *testing.T) {
	t.Parallel()
	seen, err := peerFetch(t, &fetch.Config{}, fedifyGET, 2)
	if err != nil || seen != "[rfc9421 rfc9421]" {
		t.Fatalf("seen %s, err %v; want [rfc9421 rfc9421]", seen, err)
	}
}

func TestGoToSocialSignedFetchEd25519LearnsCavage(t *testing.T) {
	t.Parallel()
	seen, err := peerFetch(t, &fetch.Config{}, goToSocialGET, 2)
	if err != nil || seen != "[rfc9421 cavage cavage]" {
		t.Fatalf("seen %s, err %v; want [rfc9421 cavage cavage]", seen, err)
	}
}

// A host whose scheme is remembered gets no second knock: its refusal is
// about the document, and the status is the one it gave.
func TestSignedFetchRememberedSchemeNoSecondKnock(t *testing.T) {
	t.Parallel()
	store := sig.NewHostSchemes(0)
	calls := 0
	refuseAfterFirst := func(scheme, _ string) int {
		calls++
		if calls == 1 && scheme == "cavage" {
			return http.StatusOK
		}
		return http.StatusUnauthorized
	}
	seen, err := peerFetch(t, &fetch.Config{FirstScheme: sig.SchemeCavage, Schemes: store}, refuseAfterFirst, 2)
	var se *fetch.StatusError
	if !errors.As(err, &se) || se.StatusCode != 401 || seen != "[cavage cavage]" {
		t.Fatalf("seen %s, err %v; want [cavage cavage] and a 401", seen, err)
	}
}

// Both knocks refused: the first answer stands.
func TestSignedFetchBothRefusedFirstAnswerStands(t *testing.T) {
	t.Parallel()
	answer := func(scheme, _ string) int {
		if scheme == "cavage" {
			return http.StatusUnauthorized
		}
		return http.StatusForbidden
	}
	seen, err := peerFetch(t, &fetch.Config{FirstScheme: sig.SchemeCavage}, answer, 1)
	var se *fetch.StatusError
	if !errors.As(err, &se) || se.StatusCode != 401 || seen != "[cavage rfc9421]" {
		t.Fatalf("seen %s, err %v; want [cavage rfc9421] and the first answer, 401", seen, err)
	}
}

// A 404 to the second knock is the server's word on the document.
func TestSignedFetchSecondKnock404Stands(t *testing.T) {
	t.Parallel()
	answer := func(scheme, _ string) int {
		if scheme == "cavage" {
			return http.StatusUnauthorized
		}
		return http.StatusNotFound
	}
	seen, err := peerFetch(t, &fetch.Config{FirstScheme: sig.SchemeCavage}, answer, 1)
	if !errors.Is(err, fetch.ErrNotFound) || seen != "[cavage rfc9421]" {
		t.Fatalf("seen %s, err %v; want [cavage rfc9421] and not found", seen, err)
	}
}
