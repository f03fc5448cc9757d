package sig

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// The body a signature's digest covers: read once, bounded, and put back
// for sending or for the handler.

// MaxBodyBytesDefault bounds the body a Signer or Verifier reads to
// compute a digest.
const MaxBodyBytesDefault = 16 << 20

// maxBodyPrealloc is the most of a declared Content-Length allocated
// before the bytes arrive; a larger body grows as it is read, so a sender
// that declares much and sends little costs only what it sent.
const maxBodyPrealloc = 1 << 20

// readBody reads req's body for digesting and leaves it re-readable.
func readBody(req *http.Request, limit int64) ([]byte, error) {
	var rc io.ReadCloser
	switch {
	case req.GetBody != nil:
		b, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("sig: body: %w", err)
		}
		rc = b
	case req.Body != nil && req.Body != http.NoBody:
		rc = req.Body
	default:
		return nil, nil
	}
	defer rc.Close()
	var body []byte
	if n := req.ContentLength; n > 0 && n <= limit && n <= maxBodyPrealloc {
		// Read exactly the declared length without regrowing, then make
		// sure nothing follows.
		body = make([]byte, n, n+1)
		if _, err := io.ReadFull(rc, body); err != nil {
			return nil, fmt.Errorf("sig: body: %w", err)
		}
	}
	var one [1]byte
	if k, err := rc.Read(one[:]); k > 0 || (err != nil && err != io.EOF) || len(body) == 0 {
		// More than declared, an unknown length, or a read error: read on.
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("sig: body: %w", err)
		}
		body = append(body, one[:k]...)
		rest, err := io.ReadAll(io.LimitReader(rc, limit+1-int64(len(body))))
		if err != nil {
			return nil, fmt.Errorf("sig: body: %w", err)
		}
		body = append(body, rest...)
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("sig: body over %d bytes", limit)
	}
	if n := req.ContentLength; n > 0 && int64(len(body)) < n {
		// As io.ReadFull refuses it when the length is preallocated.
		return nil, fmt.Errorf("sig: body of %d bytes, Content-Length %d", len(body), n)
	}
	req.Body = memoryBody(body)
	req.GetBody = func() (io.ReadCloser, error) { return memoryBody(body), nil }
	req.ContentLength = int64(len(body))
	return body, nil
}

// memoryBody is a body read into memory, in the form net/http knows is in
// memory (a bytes.Reader behind io.NopCloser): for any other reader it
// writes the headers and the body in two writes, two TCP segments the
// server must read apart, on every signed request.
func memoryBody(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }

// hasBody reports whether req has, or by its method must have, a body,
// which its signature must then cover through a digest.
func hasBody(req *http.Request) bool {
	switch req.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		return true
	}
	return req.ContentLength > 0 || (req.ContentLength < 0 && req.Body != nil && req.Body != http.NoBody)
}
