package ldsig_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/internal/fixture"
	"github.com/fedkit/fedkit/sig/ldsig"
)

// addShared seeds f with the shared Fedify body when it is there; it is
// read in place, never copied into the corpus.
func addShared(f *testing.F) {
	if d := fixture.SharedDir(); d != "" {
		if b, err := os.ReadFile(filepath.Join(d, "ldsig", "fedify-create.rsasignature2017.json")); err == nil {
			f.Add(b)
		}
	}
}

// FuzzCanonicalize feeds hostile JSON-LD to the canonicaliser: it must
// refuse or answer, never panic or hang, and answer the same twice with
// well-formed N-Quads.
func FuzzCanonicalize(f *testing.F) {
	addShared(f)
	for _, b := range mastodonBodies {
		f.Add([]byte(b.body))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		out, err := withinHangBound(t, func() (string, error) { return ldsig.Canonicalize(doc) })
		if err != nil {
			return
		}
		again, err := ldsig.Canonicalize(doc)
		if err != nil || again != out {
			t.Fatalf("not deterministic: %v\n%q\n%q", err, out, again)
		}
		for _, line := range strings.SplitAfter(out, "\n") {
			if line != "" && !strings.HasSuffix(line, " .\n") {
				t.Fatalf("not an N-Quads line: %q", line)
			}
		}
	})
}

// hangBound is far above any real document's cost (milliseconds): an
// input that takes this long is an exponential case the bounds missed.
const hangBound = 10 * time.Second

// withinHangBound fails t when fn runs past hangBound, so that the fuzzer
// records the input instead of stalling on it.
func withinHangBound(t *testing.T, fn func() (string, error)) (string, error) {
	type result struct {
		s   string
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := fn()
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		return r.s, r.err
	case <-time.After(hangBound):
		t.Fatalf("input took over %v", hangBound)
		return "", nil
	}
}

// FuzzVerifyActivity feeds hostile bodies to the whole verifier, with a
// resolver that knows the project's test key: it must never panic, and
// never accept without reporting who signed.
func FuzzVerifyActivity(f *testing.F) {
	addShared(f)
	key := testKey(f)
	for _, b := range mastodonBodies {
		f.Add([]byte(b.body))
		if s, err := ldsig.Sign([]byte(b.body), key, &ldsig.SignOpts{Creator: mKeyID, Created: mCreated}); err == nil {
			f.Add(s)
		}
	}
	v := &ldsig.Verifier{Keys: anyKey(mActor, &key.PublicKey)}
	f.Fuzz(func(t *testing.T, body []byte) {
		id, owner, err := v.VerifyActivity(context.Background(), body)
		if err == nil && (id.IsZero() || owner != mActor) {
			t.Fatalf("accepted with key %q owner %q", id, owner)
		}
	})
}
