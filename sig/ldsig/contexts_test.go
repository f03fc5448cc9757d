package ldsig_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/sig/ldsig"
)

// TestShippedContextsUnchanged holds every shipped context file to the
// SHA-256 in contexts/README.md, and the README to the shipped list: a
// changed context changes every signature over it.
func TestShippedContextsUnchanged(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("contexts", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| `([^`]+)` \\| [^|]+ \\| `([0-9a-f]{64})` \\|$").FindAllStringSubmatch(string(readme), -1)
	var urls []string
	for _, r := range rows {
		urls = append(urls, r[1])
		raw, err := os.ReadFile(filepath.Join("contexts", r[2]))
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(raw)
		if got := hex.EncodeToString(h[:]); got != r[3] {
			t.Errorf("%s: SHA-256 %s, README says %s", r[2], got, r[3])
		}
	}
	got := ldsig.ShippedContexts()
	slices.Sort(got)
	slices.Sort(urls)
	if !slices.Equal(got, urls) {
		t.Errorf("ShippedContexts %v\nREADME lists %v", got, urls)
	}
	if len(got) < 10 {
		t.Errorf("only %d contexts", len(got))
	}
}

// TestCanonicalizeShippedContexts canonicalises a document under each
// shipped context, so that each one parses and loads without the network.
func TestCanonicalizeShippedContexts(t *testing.T) {
	t.Parallel()
	for _, u := range ldsig.ShippedContexts() {
		out, err := ldsig.Canonicalize([]byte(`{"@context":["` + u + `",{"ex":"https://example.com/ns#"}],"@id":"https://example.com/a","ex:b":"c"}`))
		if err != nil {
			t.Errorf("%s: %v", u, err)
			continue
		}
		if !strings.Contains(out, `<https://example.com/a> <https://example.com/ns#b> "c" .`) {
			t.Errorf("%s: %q", u, out)
		}
	}
}

// TestCanonicalizeBounds feeds documents the canonicaliser must refuse
// before it starts, and a URDNA2015 case it must get right.
func TestCanonicalizeBounds(t *testing.T) {
	t.Parallel()
	// Identical anonymous objects nested in identical anonymous objects:
	// the shape that makes URDNA2015 factorial.
	var node func(depth, branch int) string
	node = func(depth, branch int) string {
		if depth == 0 {
			return `{"type":"Note"}`
		}
		kids := make([]string, branch)
		for i := range kids {
			kids[i] = node(depth-1, branch)
		}
		return `{"type":"Note","tag":[` + strings.Join(kids, ",") + `]}`
	}
	const as = `{"@context":"https://www.w3.org/ns/activitystreams",`
	tree := func(depth, branch int) string { return as + node(depth, branch)[1:] }
	// A ring of n blank nodes named explicitly.
	ring := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"@context":"https://www.w3.org/ns/activitystreams","@graph":[`)
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"id":"_:n%d","type":"Note","inReplyTo":"_:n%d"}`, i, (i+1)%n)
		}
		return b.String() + "]}"
	}
	cases := []struct {
		name, doc string
		want      error
		contains  string
	}{
		// 255 nodes, 5 KB: 18 s in json-gold without the bound.
		{name: "binary-tree-depth-7", doc: tree(7, 2), want: ldsig.ErrTooComplex},
		// 121 nodes, 2 KB: 2.5 s without the bound.
		{name: "ternary-tree-depth-4", doc: tree(4, 3), want: ldsig.ErrTooComplex},
		// Two copies of a 31-node tree, 1 KB: 41 s without the bound.
		{name: "two-trees-5-by-5", doc: as + `"id":"https://a.example/x","tag":[` + node(2, 5) + "," + node(2, 5) + `]}`, want: ldsig.ErrTooComplex},
		{name: "binary-tree-depth-4", doc: tree(4, 2), want: ldsig.ErrTooComplex},
		{name: "binary-tree-depth-3", doc: tree(3, 2), contains: `<http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <https://www.w3.org/ns/activitystreams#Note>`},
		{name: "star-of-31", doc: tree(1, 31), contains: `<https://www.w3.org/ns/activitystreams#tag>`},
		{name: "ring-of-6", doc: ring(6), want: ldsig.ErrTooComplex},
		{name: "ring-of-5", doc: ring(5), contains: `_:c14n4 <https://www.w3.org/ns/activitystreams#inReplyTo> _:c14n`},
		{name: "many-leaves-under-iri-node", doc: `{"@context":"https://www.w3.org/ns/activitystreams","id":"https://a.example/n","tag":[` + strings.Repeat(`{"type":"Mention","href":"https://a.example/u"},`, 300) + `{"type":"Mention"}]}`,
			contains: `<https://a.example/n> <https://www.w3.org/ns/activitystreams#tag> _:c14n`},
		{name: "deep", doc: strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat(`}`, 70), want: ldsig.ErrTooComplex},
		{name: "duplicate", doc: `{"@id":"https://a.example/","@id":"https://b.example/"}`, want: ldsig.ErrMalformed},
		{name: "trailing-data", doc: `{"@id":"https://a.example/"} {}`, want: ldsig.ErrMalformed},
		{name: "array", doc: `[{"@id":"https://a.example/"}]`, want: ldsig.ErrMalformed},
		{name: "bad-context-type", doc: `{"@context":7,"@id":"https://a.example/"}`, want: ldsig.ErrMalformed},
		{name: "unknown-context", doc: `{"@context":"https://contexts.example/x","@id":"https://a.example/"}`, want: ldsig.ErrUnknownContext},
		// URDNA2015 names blank nodes by content, not by order: the two
		// orders of the same anonymous objects canonicalise alike.
		{name: "blank-nodes-by-content", doc: `{"@context":"https://www.w3.org/ns/activitystreams","id":"https://a.example/n","tag":[{"name":"b"},{"name":"a"}]}`,
			contains: "_:c14n0 <https://www.w3.org/ns/activitystreams#name> \"a\" .\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, err := ldsig.Canonicalize([]byte(tc.doc))
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("Canonicalize: %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, tc.contains) {
				t.Fatalf("canonical form lacks %q:\n%s", tc.contains, out)
			}
		})
	}
	a, _ := ldsig.Canonicalize([]byte(`{"@context":"https://www.w3.org/ns/activitystreams","id":"https://a.example/n","tag":[{"name":"b"},{"name":"a"}]}`))
	b, _ := ldsig.Canonicalize([]byte(`{"@context":"https://www.w3.org/ns/activitystreams","id":"https://a.example/n","tag":[{"name":"a"},{"name":"b"}]}`))
	if a != b || a == "" {
		t.Fatalf("order changed the canonical form:\n%s\n%s", a, b)
	}
}
