package fedsim

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestReadHead(t *testing.T) {
	long := strings.Repeat("x", 6<<10) // longer than the 4 KiB reader
	cases := []struct {
		name, in                   string
		method, host, path, scheme string
		length                     int64
		chunked, close             bool
		body                       string
		err                        error
	}{
		{name: "signed post", in: "POST /users/a/inbox?x=1 HTTP/1.1\r\nHost: A.example:8080\r\nContent-Length: 2\r\nSignature: keyId=\"k\"\r\n\r\n{}",
			method: "POST", host: "A.example:8080", path: "/users/a/inbox", scheme: "cavage", length: 2, body: "{}"},
		{name: "rfc9421 wins over cavage", in: "POST / HTTP/1.1\r\nHost: a\r\nSignature: sig1=:AA==:\r\nSignature-Input: sig1=()\r\n\r\n",
			method: "POST", host: "a", path: "/", scheme: "rfc9421", length: -1},
		{name: "chunked", in: "POST /in HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
			method: "POST", host: "a", path: "/in", length: -1, chunked: true, body: "{}"},
		{name: "connection close", in: "GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Close\r\n\r\n",
			method: "GET", host: "a", path: "/", length: -1, close: true},
		{name: "http/1.0 closes", in: "GET / HTTP/1.0\r\nHost: a\r\n\r\n", method: "GET", host: "a", path: "/", length: -1, close: true},
		{name: "http/1.0 keep-alive", in: "GET / HTTP/1.0\r\nHost: a\r\nConnection: keep-alive\r\n\r\n", method: "GET", host: "a", path: "/", length: -1},
		{name: "absolute form names the host", in: "POST http://b.example/inbox HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
			method: "POST", host: "b.example", path: "/inbox", length: 0},
		{name: "bare LF line ends", in: "GET /x HTTP/1.1\nHost: a\n\n", method: "GET", host: "a", path: "/x", length: -1},
		{name: "a line longer than the buffer", in: "GET / HTTP/1.1\r\nHost: a\r\nX-Long: " + long + "\r\n\r\n", method: "GET", host: "a", path: "/", length: -1},
		{name: "same length twice", in: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", method: "POST", host: "a", path: "/", length: 1, body: "x"},
		{name: "lengths differ", in: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", err: errHead},
		{name: "length and chunked", in: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", err: errHead},
		{name: "signed length", in: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n", err: errHead},
		{name: "unknown coding", in: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", err: errHead},
		{name: "no request line", in: "\r\n", err: errHead},
		{name: "not http", in: "HELLO\r\n\r\n", err: errHead},
		{name: "space before colon", in: "GET / HTTP/1.1\r\nHost : a\r\n\r\n", err: errHead},
		{name: "obs-fold", in: "GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n", err: errHead},
		{name: "cut short", in: "GET / HTTP/1.1\r\nHost: a\r\n", err: io.ErrUnexpectedEOF},
		{name: "too long", in: "GET / HTTP/1.1\r\nX: " + strings.Repeat("x", maxHead) + "\r\n\r\n", err: errHead},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			br := bufio.NewReaderSize(strings.NewReader(tc.in), 4<<10)
			h := &head{}
			err := readHead(br, h)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.method != tc.method || h.host != tc.host || h.path() != tc.path || h.scheme != tc.scheme ||
				h.length != tc.length || h.chunked != tc.chunked || h.close != tc.close {
				t.Errorf("got %s %s%s scheme %q length %d chunked %v close %v", h.method, h.host, h.path(), h.scheme, h.length, h.chunked, h.close)
			}
			body, err := io.ReadAll(h.body(br))
			if err != nil || string(body) != tc.body {
				t.Errorf("body %q, %v; want %q", body, err, tc.body)
			}
		})
	}
}

// TestHeadRequestForCheck: a profile's Check sees what net/http would
// have parsed.
func TestHeadRequestForCheck(t *testing.T) {
	in := "POST /inbox HTTP/1.1\r\nHost: a.example\r\nContent-Length: 2\r\nSignature: x\r\n\r\n{}"
	br := bufio.NewReader(strings.NewReader(in))
	h := &head{}
	if err := readHead(br, h); err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(h.body(br))
	r, err := h.request(body)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || r.Host != "a.example" || r.URL.Path != "/inbox" || r.Header.Get("Signature") != "x" || string(got) != "{}" {
		t.Errorf("request %s %s%s %v body %q", r.Method, r.Host, r.URL.Path, r.Header, got)
	}
}

// FuzzReadHead: wherever net/http reads a request too, the hand reader
// agrees with it on what the simulation uses, and nothing panics.
func FuzzReadHead(f *testing.F) {
	for _, s := range []string{
		"POST /inbox HTTP/1.1\r\nHost: a.example\r\nContent-Length: 2\r\n\r\n{}",
		"GET / HTTP/1.0\r\nHost: a\r\nConnection: keep-alive\r\n\r\n",
		"POST http://b/x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\nConnection: keep-alive\r\n\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		h := &head{}
		err := readHead(bufio.NewReader(strings.NewReader(in)), h)
		r, rerr := http.ReadRequest(bufio.NewReader(strings.NewReader(in)))
		if err != nil || rerr != nil {
			return
		}
		length := h.length
		if h.chunked {
			length = -1
		} else if length < 0 {
			length = 0
		}
		if r.Method != h.method || r.Host != h.host || r.Close != h.close || r.ContentLength != length {
			t.Errorf("net/http: %s %s close %v length %d; fedsim: %s %s close %v length %d",
				r.Method, r.Host, r.Close, r.ContentLength, h.method, h.host, h.close, length)
		}
	})
}
