package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"strings"

	"github.com/fedkit/fedkit/origin"
)

// ActivityStreams is the ActivityStreams namespace, the profile that makes
// application/ld+json ActivityPub.
const ActivityStreams = "https://www.w3.org/ns/activitystreams"

// Document is a fetched ActivityPub document that passed Lookup's rules.
type Document struct {
	// URL is where the trusted copy was finally served from, after
	// redirects and any re-fetch from the document's own id.
	URL *url.URL
	// ID is the document's id.
	ID string
	// Type is the document's first type, "" when it has none.
	Type string
	// Raw is the JSON object as served.
	Raw json.RawMessage
	// Proof is set for a portable object whose Data Integrity proof was
	// verified: the verification method that signed it.
	Proof string
}

// Decode unmarshals the document into v.
func (d *Document) Decode(v any) error { return json.Unmarshal(d.Raw, v) }

// IsActivityPub reports whether a Content-Type header value names
// ActivityPub: application/activity+json, or application/ld+json whose
// profile parameter lists the ActivityStreams namespace. Plain JSON never
// does: a server that takes uploads would otherwise serve them in its name.
func IsActivityPub(contentType string) bool {
	// What Mastodon and most servers send, without parsing it each time.
	switch contentType {
	case "application/activity+json", "application/activity+json; charset=utf-8":
		return true
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch mt {
	case "application/activity+json":
		return true
	case "application/ld+json":
		return profileHasAS(params["profile"])
	}
	return false
}

func profileHasAS(profile string) bool {
	for p := range strings.FieldsSeq(profile) {
		if p == ActivityStreams {
			return true
		}
	}
	return false
}

// head is the part of a document Lookup judges, and the links and items
// a Walk reads from a collection or page, decoded in the same pass.
type head struct {
	ID           string          `json:"id"`
	Type         json.RawMessage `json:"type"`
	AttributedTo json.RawMessage `json:"attributedTo"`
	Actor        json.RawMessage `json:"actor"`
	First        json.RawMessage `json:"first"`
	Next         json.RawMessage `json:"next"`
	Items        json.RawMessage `json:"items"`
	OrderedItems json.RawMessage `json:"orderedItems"`
	TotalItems   json.RawMessage `json:"totalItems"`
}

// totalItems returns the document's totalItems, or -1 when it has none
// that is a non-negative integer.
func (p *head) totalItems() int64 {
	var n int64
	if !hasValue(p.TotalItems) || json.Unmarshal(p.TotalItems, &n) != nil || n < 0 {
		return -1
	}
	return n
}

func parseHead(b []byte) (*head, error) {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}
	var h head
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if k := caseVariant(b, headKeys[:]); k != "" {
		return nil, fmt.Errorf("%w: property %q differs from %q only in case", ErrMalformed, k, strings.ToLower(k))
	}
	return &h, nil
}

// headKeys are head's properties.
var headKeys = [...]string{"id", "type", "attributedTo", "actor", "first", "next", "items", "orderedItems", "totalItems"}

// caseVariant returns a top-level key of the JSON object b that is not one
// of keys but equals one without regard to case (as encoding/json matches
// struct fields, "ID" or "itemſ"), or "". Such a key would make head read
// another value than JSON-LD and every map reader take for the property:
// {"id": <another server's>, "ID": <its own>} would pass as the server's
// own. A scan of the short quoted strings finds the candidates, so the
// exact decode runs only for documents that have one (or an escape).
func caseVariant(b []byte, keys []string) string {
	if !mayHaveCaseVariant(b, keys) {
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	for k := range m {
		for _, want := range keys {
			if k != want && strings.EqualFold(k, want) {
				return k
			}
		}
	}
	return ""
}

// maxKeyScan bounds the quoted strings mayHaveCaseVariant looks at: the
// longest key, each byte as a six-byte escape.
const maxKeyScan = 6 * len("orderedItems")

// mayHaveCaseVariant reports whether b holds a short quoted string that
// has an escape or equals one of keys without regard to case but not
// exactly.
func mayHaveCaseVariant(b []byte, keys []string) bool {
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return false
		}
		start := i + j + 1
		end := min(len(b), start+maxKeyScan+1)
		k := bytes.IndexByte(b[start:end], '"')
		if k > 0 {
			s := b[start : start+k]
			if bytes.IndexByte(s, '\\') >= 0 {
				return true
			}
			for _, want := range keys {
				if string(s) != want && bytes.EqualFold(s, []byte(want)) {
					return true
				}
			}
		}
		i = start
	}
	return false
}

// objectID returns the "id" of a JSON object, read exactly as JSON-LD reads
// it; ambiguous reports a key that differs from "id" only in case, under
// which encoding/json would read another value.
func objectID(raw json.RawMessage) (id string, ambiguous bool) {
	var o struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return "", false
	}
	if caseVariant(raw, idKey[:]) != "" {
		return "", true
	}
	return o.ID, false
}

var idKey = [...]string{"id"}

// firstType returns a "type" that is a string or the first string of an array.
func firstType(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var a []string
	if json.Unmarshal(raw, &a) == nil && len(a) > 0 {
		return a[0]
	}
	return ""
}

// iris returns the IRIs a property names: a string, an object's id, or an
// array of those.
func iris(raw json.RawMessage) []string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	if raw[0] == '{' {
		// An ambiguous id is "", which is on no origin.
		id, _ := objectID(raw)
		return []string{id}
	}
	var a []json.RawMessage
	if json.Unmarshal(raw, &a) == nil {
		var out []string
		for _, e := range a {
			out = append(out, iris(e)...)
		}
		return out
	}
	return []string{""}
}

// Lookup fetches the ActivityPub document at rawURL and establishes it:
//
//   - only an ActivityPub content type counts (see IsActivityPub); a web
//     page is searched once for an alternate link (Link header, then HTML),
//     which is then fetched instead;
//   - a document whose id is on another origin than the URL it was finally
//     served from is fetched once more from its id, and what the id's
//     origin serves there is trusted only if its id is exactly that id;
//   - a document whose attributedTo or actor is on another origin than its
//     id is refused;
//   - a portable object (FEP-ef61 ap:// id) is trusted only with a valid
//     proof; see LookupPortable.
//
// The Document carries the URL it was finally served from.
func (f *Fetcher) Lookup(ctx context.Context, rawURL string) (*Document, error) {
	if isPortable(rawURL) {
		return f.LookupPortable(ctx, rawURL)
	}
	return f.lookup(ctx, rawURL, true)
}

// LookupAs fetches as Lookup does and decodes the document into a T.
func LookupAs[T any](ctx context.Context, f *Fetcher, rawURL string) (T, *Document, error) {
	var v T
	d, err := f.Lookup(ctx, rawURL)
	if err != nil {
		return v, nil, err
	}
	if err := json.Unmarshal(d.Raw, &v); err != nil {
		return v, d, fmt.Errorf("%w: decoding into %T: %v", ErrMalformed, v, err)
	}
	return v, d, nil
}

func (f *Fetcher) lookup(ctx context.Context, rawURL string, discover bool) (*Document, error) {
	d, _, err := f.lookupHead(ctx, rawURL, discover)
	return d, err
}

// lookupHead is lookup that also returns the document's decoded head, so
// a walk reads a page's links without decoding it again.
func (f *Fetcher) lookupHead(ctx context.Context, rawURL string, discover bool) (*Document, *head, error) {
	r, err := f.getDocument(ctx, rawURL, discover)
	if err != nil {
		return nil, nil, err
	}
	if alt, ok := r.(alternate); ok {
		// A page named its object: fetch that, once, without discovery.
		return f.lookupHead(ctx, string(alt), false)
	}
	resp := r.(*response)
	h, err := parseHead(resp.body)
	if err != nil {
		return nil, nil, err
	}
	if isPortable(h.ID) {
		d, err := f.portableDocument(resp, h)
		if err != nil {
			return nil, nil, err
		}
		return d, h, nil
	}
	if h.ID == "" {
		return nil, nil, idMismatch(resp.url.String(), "")
	}
	// Parsed once: the id's origin is compared with the URL's and with
	// every author's.
	idOrigin, idErr := origin.Parse(h.ID)
	if !sameOrigin(idOrigin, idErr, resp.url) {
		if !isHTTP(h.ID) {
			return nil, nil, idMismatch(resp.url.String(), h.ID)
		}
		// Another origin's object: ask its owner, once.
		id := h.ID
		r2, err := f.getDocument(ctx, id, false)
		if err != nil {
			return nil, nil, err
		}
		resp = r2.(*response)
		if h, err = parseHead(resp.body); err != nil {
			return nil, nil, err
		}
		idOrigin, idErr = origin.Parse(h.ID)
		if h.ID != id || !sameOrigin(idOrigin, idErr, resp.url) {
			return nil, nil, idMismatch(resp.url.String(), h.ID)
		}
	}
	if err := checkAuthors(h, idOrigin); err != nil {
		return nil, nil, err
	}
	return &Document{URL: resp.url, ID: h.ID, Type: firstType(h.Type), Raw: resp.body}, h, nil
}

// sameOrigin reports whether u is on o, the origin parsed from an id with
// error err; an unparsable id is on no origin.
func sameOrigin(o origin.Origin, err error, u *url.URL) bool {
	if err != nil {
		return false
	}
	uo, err := origin.OfURL(u)
	return err == nil && uo == o
}

// checkAuthors refuses a document whose attributedTo or actor is on another
// origin than its id (idOrigin, zero for a portable id), or for a portable
// id under another ap:// authority.
func checkAuthors(h *head, idOrigin origin.Origin) error {
	for _, prop := range []json.RawMessage{h.AttributedTo, h.Actor} {
		for _, a := range iris(prop) {
			if !sameOwner(a, h.ID, idOrigin) {
				return authorOriginError(h.ID, a)
			}
		}
	}
	return nil
}

// sameOwner compares a's origin with id's (already parsed as idOrigin), and
// ap:// authorities for portable ids.
func sameOwner(a, id string, idOrigin origin.Origin) bool {
	if isPortable(a) || isPortable(id) {
		da, okA := portableAuthority(a)
		db, okB := portableAuthority(id)
		return okA && okB && da == db
	}
	ao, err := origin.Parse(a)
	return err == nil && !idOrigin.IsZero() && ao == idOrigin
}

func isHTTP(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}

// alternate is a document URL discovered from a web page.
type alternate string

// getDocument GETs rawURL and returns its ActivityPub *response, or, when
// discover is set and the response is a page naming an alternate, that
// alternate.
func (f *Fetcher) getDocument(ctx context.Context, rawURL string, discover bool) (any, error) {
	max := f.cfg.MaxDocumentBytes
	if discover && f.cfg.MaxHTMLBytes > max {
		max = f.cfg.MaxHTMLBytes
	}
	resp, err := f.get(ctx, rawURL, getOpts{accept: AcceptActivityPub, sign: true, max: max, truncate: discover})
	if err != nil {
		return nil, err
	}
	if resp.status != 200 {
		return nil, f.statusError(resp)
	}
	ct := resp.header.Get("Content-Type")
	if IsActivityPub(ct) {
		if resp.truncated || int64(len(resp.body)) > f.cfg.MaxDocumentBytes {
			return nil, tooLarge(rawURL, f.cfg.MaxDocumentBytes)
		}
		return resp, nil
	}
	if discover {
		if alt := LinkHeaderAlternate(resp.header.Values("Link"), resp.url); alt != "" {
			return alternate(alt), nil
		}
		if isHTML(ct) {
			if alt := HTMLAlternate(resp.body, resp.url); alt != "" {
				return alternate(alt), nil
			}
		}
	}
	return nil, contentTypeError(resp.url.String(), ct)
}

func isHTML(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "text/html" || mt == "application/xhtml+xml")
}
