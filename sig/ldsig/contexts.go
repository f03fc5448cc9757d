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

// Context URLs the package ships.
const (
	ContextActivityStreams   = "https://www.w3.org/ns/activitystreams"
	ContextSecurityV1        = "https://w3id.org/security/v1"
	ContextSecurityV2        = "https://w3id.org/security/v2"
	ContextIdentityV1        = "https://w3id.org/identity/v1"
	ContextDataIntegrityV1   = "https://w3id.org/security/data-integrity/v1"
	ContextDataIntegrityV2   = "https://w3id.org/security/data-integrity/v2"
	ContextMultikeyV1        = "https://w3id.org/security/multikey/v1"
	ContextDIDV1             = "https://www.w3.org/ns/did/v1"
	ContextCIDV1             = "https://www.w3.org/ns/cid/v1"
	ContextGoToSocial        = "https://gotosocial.org/ns"
	ContextWebFinger         = "https://purl.archive.org/socialweb/webfinger"
	ContextMiscellany        = "https://purl.archive.org/miscellany"
	ContextFEP5711           = "https://w3id.org/fep/5711"
	ContextFEPef61           = "https://w3id.org/fep/ef61"
	ContextMastodonNamespace = "http://joinmastodon.org/ns"
	ContextLemmy             = "https://join-lemmy.org/context.json"
)

// shippedFiles maps each shipped URL to its file under contexts/.
var shippedFiles = map[string]string{
	ContextActivityStreams:   "activitystreams.json",
	ContextSecurityV1:        "security-v1.json",
	ContextSecurityV2:        "security-v2.json",
	ContextIdentityV1:        "identity-v1.json",
	ContextDataIntegrityV1:   "security-data-integrity-v1.json",
	ContextDataIntegrityV2:   "security-data-integrity-v2.json",
	ContextMultikeyV1:        "security-multikey-v1.json",
	ContextDIDV1:             "did-v1.json",
	ContextCIDV1:             "cid-v1.json",
	ContextGoToSocial:        "gotosocial.json",
	ContextWebFinger:         "webfinger.json",
	ContextMiscellany:        "miscellany.json",
	ContextFEP5711:           "fep-5711.json",
	ContextFEPef61:           "fep-ef61.json",
	ContextMastodonNamespace: "joinmastodon.json",
	ContextLemmy:             "join-lemmy.json",
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
