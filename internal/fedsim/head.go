package fedsim

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// errHead is a request head the simulation cannot read; the connection
// is closed, as a server does after a 400 it need not send.
var errHead = errors.New("fedsim: malformed request head")

// maxHead bounds a request head, as servers do (net/http's default is
// 1 MiB; nginx's 8 KiB lines).
const maxHead = 64 << 10

// head is what the simulation needs of a request, read by hand: net/http's
// parser builds a header map, a URL and a Request for every request, which
// was a third of the simulated servers' CPU per request in a fan-out whose
// cores the simulation shares with the Deliverer it measures. A host whose
// profile has a Check gets a full *http.Request, parsed from the same
// bytes by net/http (request).
type head struct {
	// raw is the request line and header fields, line ends included.
	raw                  []byte
	method, target, host string
	// scheme names the signature, as Request.Scheme does.
	scheme string
	// length is the Content-Length, or -1 when none is given.
	length         int64
	chunked, close bool
}

var heads = sync.Pool{New: func() any { return &head{raw: make([]byte, 0, 2<<10)} }}

// readHead reads the next request head from br into h.
func readHead(br *bufio.Reader, h *head) error {
	h.raw = h.raw[:0]
	start := 0 // where the line being read began
	for {
		line, err := br.ReadSlice('\n')
		h.raw = append(h.raw, line...)
		if len(h.raw) > maxHead {
			return errHead
		}
		if err == bufio.ErrBufferFull {
			continue // the same line goes on
		}
		if err != nil {
			if err == io.EOF && len(h.raw) > 0 {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		if l := h.raw[start:]; len(l) <= 2 && (string(l) == "\r\n" || string(l) == "\n") {
			if start == 0 {
				return errHead // no request line
			}
			return h.parse()
		}
		start = len(h.raw)
	}
}

// parse reads the fields the simulation uses out of h.raw.
func (h *head) parse() error {
	rest := h.raw
	line, rest, _ := bytes.Cut(rest, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	method, line, ok1 := bytes.Cut(line, []byte{' '})
	target, proto, ok2 := bytes.Cut(line, []byte{' '})
	if !ok1 || !ok2 || len(method) == 0 || len(target) == 0 || !bytes.HasPrefix(proto, []byte("HTTP/1.")) {
		return errHead
	}
	h.method, h.target = internMethod(method), string(target)
	h.host, h.scheme, h.length, h.chunked = "", "", -1, false
	sig, sigInput, conn := false, false, false
	closeTok, keepAlive := false, false
	for len(rest) > 0 {
		line, rest, _ = bytes.Cut(rest, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 {
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			return errHead // obs-fold, which a server may reject (RFC 9112 5.2)
		}
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok || len(name) == 0 || name[len(name)-1] == ' ' || name[len(name)-1] == '\t' {
			return errHead
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Host")):
			h.host = string(value)
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, err := strconv.ParseUint(string(value), 10, 63)
			if err != nil || (h.length >= 0 && int64(n) != h.length) {
				return errHead
			}
			h.length = int64(n)
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			if !bytes.EqualFold(value, []byte("chunked")) {
				return errHead // the only coding a client sends a server
			}
			h.chunked = true
		case bytes.EqualFold(name, []byte("Connection")) && !conn:
			// Only the first field, as net/http reads it.
			conn = true
			for tok := range strings.SplitSeq(string(value), ",") {
				switch strings.ToLower(strings.TrimSpace(tok)) {
				case "close":
					closeTok = true
				case "keep-alive":
					keepAlive = true
				}
			}
		case bytes.EqualFold(name, []byte("Signature-Input")):
			sigInput = true
		case bytes.EqualFold(name, []byte("Signature")):
			sig = true
		}
	}
	// HTTP/1.0 closes unless asked to keep alive; HTTP/1.1 keeps alive
	// unless asked to close (RFC 9112 9.3).
	if string(proto) == "HTTP/1.0" {
		h.close = !keepAlive
	} else {
		h.close = closeTok
	}
	if h.chunked && h.length >= 0 {
		return errHead // RFC 9112 6.3: a request smuggling tell
	}
	if !strings.HasPrefix(h.target, "/") {
		// The absolute form names the host itself (RFC 9112 3.2.2).
		u, err := url.ParseRequestURI(h.target)
		if err != nil {
			return errHead
		}
		if u.Host != "" {
			h.host = u.Host
		}
	}
	switch {
	case sigInput:
		h.scheme = "rfc9421"
	case sig:
		h.scheme = "cavage"
	}
	return nil
}

// path is the target's path, for Request.Path.
func (h *head) path() string {
	if strings.HasPrefix(h.target, "/") {
		p, _, _ := strings.Cut(h.target, "?")
		return p
	}
	if u, err := url.ParseRequestURI(h.target); err == nil {
		return u.Path
	}
	return ""
}

// body reads the request's body from br.
func (h *head) body(br *bufio.Reader) io.Reader {
	switch {
	case h.chunked:
		return httputil.NewChunkedReader(br)
	case h.length > 0:
		return io.LimitReader(br, h.length)
	}
	return http.NoBody
}

// request parses h.raw into a full request, for a profile's Check, with
// body as its body.
func (h *head) request(body []byte) (*http.Request, error) {
	r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(h.raw)))
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return r, nil
}

// internMethod saves the allocation for the methods clients send.
func internMethod(m []byte) string {
	switch string(m) {
	case http.MethodPost:
		return http.MethodPost
	case http.MethodGet:
		return http.MethodGet
	case http.MethodHead:
		return http.MethodHead
	}
	return string(m)
}
