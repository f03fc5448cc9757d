package ldsig_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
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
	twins := `{"@context":"https://www.w3.org/ns/activitystreams","type":"Note","tag":[` +
		strings.Repeat(`{"type":"Mention","href":"https://a.example/u"},`, 4) + `{"type":"Mention","href":"https://a.example/v"}]}`
	twinsUnderIRI := strings.Replace(twins, `"type":"Note"`, `"id":"https://a.example/n","type":"Note"`, 1)
	cases := []struct {
		name, doc string
		want      error
		contains  string
	}{
		{name: "anonymous-twins", doc: twins, want: ldsig.ErrTooComplex},
		{name: "twins-under-iri-node", doc: twinsUnderIRI, contains: `<https://a.example/n> <https://www.w3.org/ns/activitystreams#tag> _:c14n`},
		{name: "blank-node-id", doc: `{"@context":"https://www.w3.org/ns/activitystreams","id":"_:b0","type":"Note","inReplyTo":"_:b0"}`, want: ldsig.ErrTooComplex},
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
