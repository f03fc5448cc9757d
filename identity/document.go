package identity

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Identity is what a Resolver learns about a DID.
type Identity struct {
	// DID is the DID the document is for.
	DID DID
	// Handle is the handle verified both ways (declared by the document and
	// resolving back to DID), or HandleInvalid.
	Handle Handle
	// DeclaredHandle is the document's claim, verified or not; zero if none.
	DeclaredHandle Handle
	// PDS is the #atproto_pds service endpoint, or "".
	PDS string
	// SigningKey is the publicKeyMultibase of <did>#atproto, or "".
	SigningKey string
	// ResolvedAt is when the document was fetched.
	ResolvedAt time.Time
}

// didDocument is the subset of a DID document atproto uses.
type didDocument struct {
	ID                 string   `json:"id"`
	AlsoKnownAs        []string `json:"alsoKnownAs"`
	VerificationMethod []struct {
		ID                 string `json:"id"`
		Type               string `json:"type"`
		PublicKeyMultibase string `json:"publicKeyMultibase"`
	} `json:"verificationMethod"`
	Service []struct {
		ID              string          `json:"id"`
		Type            string          `json:"type"`
		ServiceEndpoint json.RawMessage `json:"serviceEndpoint"`
	} `json:"service"`
}

// ParseDocument reads a DID document for did. The document's id must equal
// did: one naming another DID is an error matching ErrSubjectMismatch as
// well as ErrDIDResolutionFailed and ErrInvalidDocument. The returned
// Identity's Handle is HandleInvalid: verification is the Resolver's job.
func ParseDocument(did DID, body []byte) (*Identity, error) {
	var doc didDocument
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("%w: %w: not JSON", ErrDIDResolutionFailed, ErrInvalidDocument)
	}
	if doc.ID != string(did) {
		// A document for another DID is the spec's subject mismatch
		// (permanent), not a fetch failure worth retrying.
		return nil, fmt.Errorf("%w: %w: %w", ErrDIDResolutionFailed, ErrInvalidDocument, ErrSubjectMismatch)
	}
	id := &Identity{DID: did, Handle: HandleInvalid}
	// The first at:// entry that parses as a handle is the claim.
	for _, aka := range doc.AlsoKnownAs {
		rest, ok := strings.CutPrefix(aka, "at://")
		if !ok {
			continue
		}
		if h, err := ParseHandle(rest); err == nil {
			id.DeclaredHandle = h
			break
		}
	}
	for _, s := range doc.Service {
		if (s.ID == "#atproto_pds" || s.ID == string(did)+"#atproto_pds") && s.Type == "AtprotoPersonalDataServer" {
			var ep string
			if json.Unmarshal(s.ServiceEndpoint, &ep) != nil {
				continue
			}
			if u, err := url.Parse(ep); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
				id.PDS = ep
			}
			break
		}
	}
	for _, vm := range doc.VerificationMethod {
		if (vm.ID == "#atproto" || vm.ID == string(did)+"#atproto") && vm.Type == "Multikey" {
			id.SigningKey = vm.PublicKeyMultibase
			break
		}
	}
	return id, nil
}

// VerifiedHandle returns the handle of resolved when it verified both ways
// for subject. The checks run in the seed's order: no resolution is
// ErrHandleUnverified; a resolution of another DID (exact, case-sensitive)
// is ErrSubjectMismatch; an empty or invalid handle is ErrHandleUnverified.
func VerifiedHandle(resolved *Identity, subject DID) (Handle, error) {
	if resolved == nil {
		return "", ErrHandleUnverified
	}
	if resolved.DID != subject {
		return "", ErrSubjectMismatch
	}
	if resolved.Handle.IsZero() || resolved.Handle == HandleInvalid {
		return "", ErrHandleUnverified
	}
	return resolved.Handle, nil
}
