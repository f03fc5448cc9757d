package fetch

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/fedkit/fedkit/origin"
	"github.com/fedkit/fedkit/sig"
)

// Portable objects (FEP-ef61).
//
// What is supported, exactly:
//   - ids of the form ap://did:key:z6Mk.../path (the colons of the DID may
//     be percent-encoded), where the DID is an Ed25519 did:key; no other DID
//     method is resolved;
//   - fetching them from the gateways in Config.Gateways, in order, at
//     https://<gateway>/.well-known/apgateway/<did>/<path>, or from a
//     gateway URL given to Lookup directly;
//   - trust only with one eddsa-jcs-2022 Data Integrity proof whose
//     verificationMethod is did:key:<key>#<key> for the id's own DID,
//     verified with sig.VerifyProof;
//   - attributedTo and actor must be ap:// ids of the same DID.
//
// Not supported: did:web or other DID methods, proof sets or chains,
// gateway discovery from an actor's "gateways", and FEP-ef61 compatible
// (https) ids that carry proofs.

func isPortable(s string) bool { return strings.HasPrefix(s, "ap://") }

// portableAuthority returns the DID an ap:// URL is under.
func portableAuthority(s string) (string, bool) {
	if !isPortable(s) {
		return "", false
	}
	rest := s[len("ap://"):]
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	did, err := url.PathUnescape(rest)
	if err != nil || !strings.HasPrefix(did, "did:") {
		return "", false
	}
	return did, true
}

// portablePath returns the DID and the rest ("/path?query") of an ap:// URL.
func portablePath(s string) (did, rest string, ok bool) {
	did, ok = portableAuthority(s)
	if !ok {
		return "", "", false
	}
	r := s[len("ap://"):]
	if i := strings.IndexAny(r, "/?#"); i >= 0 {
		rest = r[i:]
	}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	return did, rest, true
}

// LookupPortable fetches an ap:// object from the configured gateways and
// returns it only if its proof verifies (see the package documentation on
// portable objects). The first gateway that serves it decides.
func (f *Fetcher) LookupPortable(ctx context.Context, apURL string) (*Document, error) {
	did, rest, ok := portablePath(apURL)
	if !ok {
		return nil, fmt.Errorf("%w: portable id %s", ErrUnsupported, clip(apURL))
	}
	if _, err := didKeyEd25519(did); err != nil {
		return nil, err
	}
	if len(f.cfg.Gateways) == 0 {
		return nil, fmt.Errorf("%w: no gateway configured for portable objects", ErrUnsupported)
	}
	var lastErr error
	for _, gw := range f.cfg.Gateways {
		u := strings.TrimSuffix(gw, "/") + "/.well-known/apgateway/" + did + rest
		r, err := f.getDocument(ctx, u, false)
		if err != nil {
			lastErr = err
			continue
		}
		resp := r.(*response)
		h, err := parseHead(resp.body)
		if err != nil {
			return nil, err
		}
		if !samePortable(h.ID, apURL) {
			return nil, idMismatch(resp.url.String(), h.ID)
		}
		return f.portableDocument(resp, h)
	}
	return nil, lastErr
}

// samePortable compares ap:// URLs with their authorities unescaped.
func samePortable(a, b string) bool {
	da, ra, okA := portablePath(a)
	db, rb, okB := portablePath(b)
	return okA && okB && da == db && ra == rb
}

// portableDocument verifies a fetched document with a portable id.
func (f *Fetcher) portableDocument(resp *response, h *head) (*Document, error) {
	did, ok := portableAuthority(h.ID)
	if !ok {
		return nil, idMismatch(resp.url.String(), h.ID)
	}
	pub, err := didKeyEd25519(did)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(resp.body, &doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	p, err := sig.ParseProof(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrProof, err)
	}
	vmDID, _, _ := strings.Cut(p.VerificationMethod, "#")
	if vmDID != did {
		return nil, fmt.Errorf("%w: signed by another DID", ErrProof)
	}
	if _, err := sig.VerifyProof(doc, pub); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrProof, err)
	}
	if err := checkAuthors(h, origin.Origin{}); err != nil {
		return nil, err
	}
	return &Document{URL: resp.url, ID: h.ID, Type: firstType(h.Type), Raw: resp.body, Proof: p.VerificationMethod}, nil
}

// didKeyEd25519 returns the Ed25519 key a did:key names.
func didKeyEd25519(did string) (ed25519.PublicKey, error) {
	mb, ok := strings.CutPrefix(did, "did:key:")
	if !ok {
		return nil, fmt.Errorf("%w: DID method of %s (only did:key)", ErrUnsupported, clip(did))
	}
	k, err := sig.ParseMultikey(mb)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrProof, err)
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: did:key is not Ed25519", ErrUnsupported)
	}
	return pub, nil
}
