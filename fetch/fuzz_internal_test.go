package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/origin"
)

// Fuzz targets for what Lookup and Walk read from every document a peer
// serves: the head (id, type, authors, links, items), the IRIs of author
// properties, and collection pages. Seeds are here and in
// testdata/fuzz/<Name>/.

var headSeeds = []string{
	`{"@context":"https://www.w3.org/ns/activitystreams","id":"https://m.example/users/alice/statuses/1","type":"Note","attributedTo":"https://m.example/users/alice","content":"<p>hi</p>"}`,
	`{"id":"https://l.example/post/7","type":["Page","as:Page"],"attributedTo":[{"id":"https://l.example/u/bob","type":"Person"},"https://l.example/c/rust"]}`,
	`{"id":"https://m.example/users/alice/outbox","type":"OrderedCollection","totalItems":3,"first":"https://m.example/users/alice/outbox?page=1"}`,
	`{"id":"https://m.example/c?page=1","type":"OrderedCollectionPage","next":{"id":"https://m.example/c?page=2","orderedItems":[]},"orderedItems":["a",{"id":"b"}],"totalItems":-1}`,
	`{"id":"https://victim.example/1","ID":"https://evil.example/1","actor":"https://evil.example/u"}`,
	`{"id":"ap://did:key:z6Mk/objects/1","attributedTo":"ap://did:key:z6Mk/actor"}`,
	`{"\u0069d":"https://a.example/x","type":"Note","name":"Id"}`,
	` ["not an object"]`,
}

func FuzzParseHead(f *testing.F) {
	for _, s := range headSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseHead(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("parseHead: %v, want ErrMalformed", err)
			}
			return
		}
		var m map[string]any
		if !json.Valid(b) || json.Unmarshal(b, &m) != nil {
			t.Fatalf("parseHead accepted what is not a JSON object: %q", b)
		}
		// What head read is what an exact reader reads.
		if id, _ := m["id"].(string); id != h.ID {
			t.Fatalf("head id %q, exact id %q", h.ID, id)
		}
		_ = firstType(h.Type)
		_ = h.totalItems()
		_ = hasValue(h.itemsRaw())
		idOrigin, idErr := origin.Parse(h.ID)
		if idErr != nil {
			idOrigin = origin.Origin{}
		}
		if checkAuthors(h, idOrigin) != nil {
			return
		}
		// Accepted authors are the id's, read exactly.
		for _, prop := range []string{"attributedTo", "actor"} {
			for _, a := range refIRIs(m[prop]) {
				if !sameOwner(a, h.ID, idOrigin) {
					t.Fatalf("author %q of %q accepted", a, h.ID)
				}
			}
		}
	})
}

// refIRIs is iris read from a decoded value with exact keys: a string, an
// object's "id" ("" when it has none that is a string, or a key differing
// from "id" only in case), or an array of those.
func refIRIs(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return []string{x}
	case map[string]any:
		for k := range x {
			if k != "id" && strings.EqualFold(k, "id") {
				return []string{""}
			}
		}
		id, _ := x["id"].(string)
		return []string{id}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, refIRIs(e)...)
		}
		return out
	}
	return []string{""}
}

var iriSeeds = []string{
	`"https://m.example/users/alice"`,
	`{"id":"https://l.example/u/bob","type":"Person"}`,
	`["https://a.example/1",{"id":"https://a.example/2"},[{"id":3}],null,true]`,
	`{"id":"https://victim.example/u","ID":"https://evil.example/u"}`,
	`{"type":"Person"}`,
	`"\u00e9\ud800"`,
	`null`,
}

func FuzzIRIs(f *testing.F) {
	for _, s := range iriSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		if json.Unmarshal(b, &v) != nil {
			return
		}
		got, want := iris(b), refIRIs(v)
		if !slices.Equal(got, want) {
			t.Fatalf("iris(%s) = %q, exact reading %q", b, got, want)
		}
	})
}

// noNet resolves nothing, so a walk that needs a page by IRI fails before
// any connection.
type noNet struct{}

func (noNet) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

var pageSeeds = []string{
	`{"id":"https://a.example/notes/1/replies","type":"Collection","first":{"type":"CollectionPage","next":{"type":"CollectionPage","items":["https://a.example/r/2"]},"items":["https://a.example/r/1",{"id":"https://a.example/r/3","type":"Note"},{"id":"https://b.example/r/4","type":"Note"}]}}`,
	`{"type":"OrderedCollection","totalItems":1,"orderedItems":[{"id":"https://b.example/x","ID":"https://a.example/x"}]}`,
	`{"type":"OrderedCollectionPage","orderedItems":[],"next":{"orderedItems":[],"next":{"orderedItems":[],"next":{"orderedItems":["z"]}}}}`,
	`{"type":"Collection","first":"https://a.example/p/1"}`,
	`{"id":"https://b.example/c","type":"Collection","items":"https://a.example/only"}`,
	`"https://a.example/notes/1/replies"`,
	`[1,2]`,
}

func FuzzWalkEmbedded(f *testing.F) {
	for _, s := range pageSeeds {
		f.Add([]byte(s))
	}
	c, err := client.New(&client.Config{Resolver: noNet{}})
	if err != nil {
		f.Fatal(err)
	}
	fe, err := New(c, nil)
	if err != nil {
		f.Fatal(err)
	}
	const embedder = "https://a.example/notes/1"
	on, _ := origin.Parse(embedder)
	lim := WalkLimits{Pages: 8, Items: 64, EmptyPages: 2}
	f.Fuzz(func(t *testing.T, b []byte) {
		w := fe.WalkEmbedded(embedder, json.RawMessage(b), lim)
		for n := 0; ; n++ {
			if n > lim.Items+1 {
				t.Fatalf("walk handed out more than %d items", lim.Items)
			}
			it, err := w.Next(context.Background())
			if err == io.EOF {
				break
			}
			if err != nil {
				if !errors.Is(err, ErrWalkLimit) && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrCrossOriginPage) &&
					!errors.Is(err, ErrUnsupported) && !isNetErr(err) {
					t.Fatalf("walk ended with an undocumented error: %v", err)
				}
				break
			}
			switch {
			case it.IRI != "" && it.Object != nil, it.IRI == "" && it.Object == nil:
				t.Fatalf("item %+v is neither an IRI nor an object", it)
			case it.Object != nil && !json.Valid(it.Object):
				t.Fatalf("item object %q is not JSON", it.Object)
			case it.Object != nil && it.ID != "" && !it.Claim:
				// An object the walk vouches for is on the embedder's origin.
				if o, err := origin.Parse(it.ID); err != nil || o != on {
					t.Fatalf("item %q on another origin not flagged as a claim", it.ID)
				}
			case it.Object != nil && !bytes.HasPrefix(bytes.TrimSpace(it.Object), []byte("{")):
				t.Fatalf("item object %q is not an object", it.Object)
			}
		}
		if w.Pages() > lim.Pages {
			t.Fatalf("read %d pages past the limit %d", w.Pages(), lim.Pages)
		}
	})
}

// isNetErr reports a failure to fetch a page by IRI: the fuzz client
// resolves nothing.
func isNetErr(err error) bool {
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.Is(err, client.ErrInvalidURL) || errors.Is(err, client.ErrBlocked) || errors.Is(err, client.ErrHiddenService)
}
