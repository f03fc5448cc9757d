package ldsig

import (
	"embed"
	"encoding/json"
	"fmt"
	"maps"
	"sync"

	"github.com/piprate/json-gold/ld"
)

// The JSON-LD context documents the package ships, by the URL bodies name
// them with. contexts/README.md says where each copy came from; they are
// byte-for-byte the published documents, and TestShippedContextsUnchanged
// holds them to their SHA-256.
//
//go:embed contexts/*.json
var contextFiles embed.FS

// Context URLs the package ships (ShippedContexts lists them).
const (
	ctxActivityStreams   = "https://www.w3.org/ns/activitystreams"
	ctxSecurityV1        = "https://w3id.org/security/v1"
	ctxSecurityV2        = "https://w3id.org/security/v2"
	ctxIdentityV1        = "https://w3id.org/identity/v1"
	ctxDataIntegrityV1   = "https://w3id.org/security/data-integrity/v1"
	ctxDataIntegrityV2   = "https://w3id.org/security/data-integrity/v2"
	ctxMultikeyV1        = "https://w3id.org/security/multikey/v1"
	ctxDIDV1             = "https://www.w3.org/ns/did/v1"
	ctxCIDV1             = "https://www.w3.org/ns/cid/v1"
	ctxGoToSocial        = "https://gotosocial.org/ns"
	ctxWebFinger         = "https://purl.archive.org/socialweb/webfinger"
	ctxMiscellany        = "https://purl.archive.org/miscellany"
	ctxFEP5711           = "https://w3id.org/fep/5711"
	ctxFEPef61           = "https://w3id.org/fep/ef61"
	ctxMastodonNamespace = "http://joinmastodon.org/ns"
	ctxLemmy             = "https://join-lemmy.org/context.json"
)

// shippedFiles maps each shipped URL to its file under contexts/.
var shippedFiles = map[string]string{
	ctxActivityStreams:   "activitystreams.json",
	ctxSecurityV1:        "security-v1.json",
	ctxSecurityV2:        "security-v2.json",
	ctxIdentityV1:        "identity-v1.json",
	ctxDataIntegrityV1:   "security-data-integrity-v1.json",
	ctxDataIntegrityV2:   "security-data-integrity-v2.json",
	ctxMultikeyV1:        "security-multikey-v1.json",
	ctxDIDV1:             "did-v1.json",
	ctxCIDV1:             "cid-v1.json",
	ctxGoToSocial:        "gotosocial.json",
	ctxWebFinger:         "webfinger.json",
	ctxMiscellany:        "miscellany.json",
	ctxFEP5711:           "fep-5711.json",
	ctxFEPef61:           "fep-ef61.json",
	ctxMastodonNamespace: "joinmastodon.json",
	ctxLemmy:             "join-lemmy.json",
}

// ShippedContexts returns the URLs of the context documents the package
// ships, in no particular order.
func ShippedContexts() []string {
	out := make([]string, 0, len(shippedFiles))
	for u := range shippedFiles {
		out = append(out, u)
	}
	return out
}

// shipped parses the embedded documents once. They are read-only
// afterwards: json-gold reads a loaded document without changing it
// (TestConcurrentVerify runs under -race to keep that true).
var shipped = sync.OnceValues(func() (map[string]any, error) {
	docs := make(map[string]any, len(shippedFiles))
	for u, f := range shippedFiles {
		raw, err := contextFiles.ReadFile("contexts/" + f)
		if err != nil {
			return nil, err
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("ldsig: shipped context %s: %w", u, err)
		}
		docs[u] = v
	}
	return docs, nil
})

// loader is a json-gold DocumentLoader over the shipped contexts and the
// caller's extra ones. It never touches the network or the file system:
// anything else is an *UnknownContextError.
type loader struct {
	docs map[string]any
}

// newLoader returns the loader for one call, with extra (URL to raw JSON)
// on top of the shipped documents.
func newLoader(extra map[string][]byte) (*loader, error) {
	base, err := shipped()
	if err != nil {
		return nil, err
	}
	if len(extra) == 0 {
		return &loader{docs: base}, nil
	}
	docs := maps.Clone(base)
	for u, raw := range extra {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("ldsig: extra context %s: %w", u, err)
		}
		if m, ok := v.(map[string]any); !ok || m["@context"] == nil {
			return nil, fmt.Errorf("ldsig: extra context %s has no @context member", u)
		}
		docs[u] = v
	}
	return &loader{docs: docs}, nil
}

// LoadDocument implements ld.DocumentLoader.
func (l *loader) LoadDocument(u string) (*ld.RemoteDocument, error) {
	d, ok := l.docs[u]
	if !ok {
		return nil, &UnknownContextError{URL: u}
	}
	return &ld.RemoteDocument{DocumentURL: u, Document: d}, nil
}
