package ldsig

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/piprate/json-gold/ld"
)

func ldOptions(l *loader) *ld.JsonLdOptions {
	opts := ld.NewJsonLdOptions("")
	opts.Algorithm = ld.AlgorithmURDNA2015
	opts.Format = "application/n-quads"
	opts.ProcessingMode = ld.JsonLd_1_1
	opts.DocumentLoader = l
	return opts
}

// Canonicalize returns the URDNA2015 canonical N-Quads of a JSON-LD
// document, loading contexts only from those the package ships. It
// applies the same bounds as VerifyActivity (MaxBodyBytesDefault,
// nesting, blank nodes) and returns ErrMalformed, ErrTooComplex or an
// *UnknownContextError.
func Canonicalize(doc []byte) (string, error) {
	if len(doc) > MaxBodyBytesDefault {
		return "", fmt.Errorf("%w: document of %d bytes", ErrTooComplex, len(doc))
	}
	m, err := decodeObject(doc)
	if err != nil {
		return "", err
	}
	l, err := newLoader(nil)
	if err != nil {
		return "", err
	}
	return canonicalize(m, l)
}

// canonicalize runs URDNA2015 over doc, after checkBlankNodes has bounded
// its cost. json-gold is not written for hostile input, so a panic inside
// it is a refusal, not a crash.
func canonicalize(doc any, l *loader) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("%w: JSON-LD processor failed", ErrMalformed)
		}
	}()
	opts := ldOptions(l)
	toRDF := ldOptions(l)
	toRDF.Format = "" // the dataset itself, to inspect before normalising
	ds, err := ld.NewJsonLdProcessor().ToRDF(doc, toRDF)
	if err != nil {
		return "", ldError(err)
	}
	dataset, ok := ds.(*ld.RDFDataset)
	if !ok {
		return "", fmt.Errorf("%w: dataset is %T", ErrMalformed, ds)
	}
	if err := checkBlankNodes(dataset); err != nil {
		return "", err
	}
	res, err := ld.NewJsonLdApi().Normalize(dataset, opts)
	if err != nil {
		return "", ldError(err)
	}
	s, ok := res.(string)
	if !ok {
		return "", fmt.Errorf("%w: canonical form is %T", ErrMalformed, res)
	}
	return s, nil
}

// ldError maps a json-gold error to ours, keeping an unknown context typed.
func ldError(err error) error {
	var uc *UnknownContextError
	if errors.As(err, &uc) {
		return uc
	}
	var le *ld.JsonLdError
	if errors.As(err, &le) {
		return fmt.Errorf("%w: JSON-LD: %s", ErrMalformed, le.Code)
	}
	return fmt.Errorf("%w: JSON-LD processing failed", ErrMalformed)
}

// hash is the hex SHA-256 of doc's canonical form, as LD Signatures 2017
// hash both the options and the document.
func hash(doc any, l *loader) (string, error) {
	c, err := canonicalize(doc, l)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(c))
	return hex.EncodeToString(h[:]), nil
}

// checkContexts refuses a document whose own contexts (inline objects,
// anywhere in it, or a null that resets the context) give a member name
// or a type name another meaning than the shipped contexts it names give
// that name. The signature covers the RDF graph, not the JSON: without
// this, anyone could swap "to" and "cc", or relabel a Delete as a Create,
// by adding {"to": "as:cc", "cc": "as:to"} to @context, and the
// signature would still verify while a reader of the JSON saw the swap.
// Names no shipped context defines are not checked: they are covered by
// the signature only as far as the document's contexts define them.
func checkContexts(doc map[string]any, l *loader) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: JSON-LD processor failed", ErrMalformed)
		}
	}()
	opts := ldOptions(l)
	root := ld.NewContext(nil, opts) // Parse copies; root stays empty
	return walkContexts(doc, root, root, nil)
}

// walkContexts checks node under actual (the document's contexts) and
// known (only the shipped contexts among them, by URL); from is the @context value that produced actual, so
// that a nested copy of it (Fedify repeats the document's context in its
// proof) is not processed again: applying a context twice changes
// nothing.
func walkContexts(node any, actual, known *ld.Context, from any) error {
	switch n := node.(type) {
	case []any:
		for _, e := range n {
			if err := walkContexts(e, actual, known, from); err != nil {
				return err
			}
		}
	case map[string]any:
		if c, ok := n["@context"]; ok && !reflect.DeepEqual(c, from) {
			parent := actual
			var err error
			if actual, err = parent.Parse(c); err != nil {
				return ldError(err)
			}
			if u := urlsOnly(c); reflect.DeepEqual(u, c) && parent == known {
				known = actual // no inline context: both readers agree
			} else if known, err = known.Parse(u); err != nil {
				return ldError(err)
			}
			from = c
		}
		for k, v := range n {
			if k == "@context" {
				continue
			}
			if err := sameMeaning(k, actual, known); err != nil {
				return err
			}
			if t, _ := actual.ExpandIri(k, false, true, nil, nil); t == "@type" {
				for _, tv := range stringValues(v) {
					if err := sameMeaning(tv, actual, known); err != nil {
						return err
					}
				}
			}
			if err := walkContexts(v, actual, known, from); err != nil {
				return err
			}
		}
	}
	return nil
}

// sameMeaning reports ErrContextOverride when the shipped contexts give
// term a meaning and the document's contexts give it another.
func sameMeaning(term string, actual, known *ld.Context) error {
	want, err := known.ExpandIri(term, false, true, nil, nil)
	if err != nil || want == "" || strings.HasPrefix(want, "_:") || !strings.Contains(want, ":") {
		return nil // the shipped contexts leave it undefined
	}
	got, err := actual.ExpandIri(term, false, true, nil, nil)
	if err != nil || got != want {
		return fmt.Errorf("%w: %.64q", ErrContextOverride, term)
	}
	kd, ad := known.GetTermDefinition(term), actual.GetTermDefinition(term)
	if kd == nil {
		return nil
	}
	if ad == nil || ad.Reverse != kd.Reverse || ad.Type != kd.Type || !slices.Equal(ad.Container, kd.Container) {
		return fmt.Errorf("%w: %.64q", ErrContextOverride, term)
	}
	return nil
}

// urlsOnly keeps the context references of a @context value: what a
// reader who knows only the shipped contexts would apply.
func urlsOnly(c any) any {
	switch v := c.(type) {
	case string:
		return v
	case []any:
		out := []any{}
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return []any{}
}

// stringValues returns the string values of v, a string or an array.
func stringValues(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
