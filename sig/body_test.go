package sig_test

import (
	"bytes"
	"crypto/ed25519"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/sig"
)

// countingWriter counts Write calls: one per TCP write when it stands for
// a connection.
type countingWriter struct {
	writes int
	buf    bytes.Buffer
}

func (w *countingWriter) Write(p []byte) (int, error) { w.writes++; return w.buf.Write(p) }

// TestSignedRequestIsWrittenOnce: a signed request's body is put back in a
// form net/http knows is in memory, so the request goes out in one write.
// With any other body net/http flushes the headers first: two writes, two
// segments, and a second read at the server, on every delivery.
func TestSignedRequestIsWrittenOnce(t *testing.T) {
	t.Parallel()
	_, key, _ := ed25519.GenerateKey(nil)
	s, err := sig.NewSigner(key, "https://a.example/users/alice#main-key", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, scheme := range []sig.Scheme{sig.SchemeCavage, sig.SchemeRFC9421} {
		t.Run(scheme.String(), func(t *testing.T) {
			const body = `{"type":"Create"}`
			// A body net/http cannot see into, as an application may pass.
			req, _ := http.NewRequest(http.MethodPost, "https://b.example/inbox", io.NopCloser(io.MultiReader(strings.NewReader(body))))
			req.ContentLength = int64(len(body))
			if err := s.Sign(req, scheme); err != nil {
				t.Fatal(err)
			}
			var w countingWriter
			if err := req.Write(&w); err != nil {
				t.Fatal(err)
			}
			if w.writes != 1 {
				t.Errorf("the signed request took %d writes, want 1", w.writes)
			}
			if !strings.HasSuffix(w.buf.String(), "\r\n\r\n"+body) {
				t.Errorf("request ends %q, want the body after the headers", w.buf.String()[max(0, w.buf.Len()-40):])
			}
			again, err := req.GetBody()
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := io.ReadAll(again); string(b) != body {
				t.Errorf("GetBody gave %q", b)
			}
		})
	}
}
