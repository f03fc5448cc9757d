package sig

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/dunglas/httpsfv"
)

// message is the view of a request or response that signature components
// are derived from.
type message struct {
	method    string
	scheme    string
	authority string // lower-case host, port only when not the default
	uri       *url.URL
	header    http.Header
	status    int      // responses only
	req       *message // the request a response answers, for ;req

	// query indexes the decoded query by re-encoded name, built on the
	// first @query-param; queryErr is why it could not be.
	query    map[string]queryEntry
	queryErr error
	// dicts holds fields already parsed as dictionaries for ;key.
	dicts map[string]*httpsfv.Dictionary
}

// requestMessage derives a message from req. scheme overrides the
// request's own (an inbound server request has none in req.URL).
func requestMessage(req *http.Request, scheme string) *message {
	m := new(message)
	m.initRequest(req, scheme)
	return m
}

// initRequest fills m from req, so that a caller can keep m on its stack.
func (m *message) initRequest(req *http.Request, scheme string) {
	*m = message{method: req.Method, header: req.Header, uri: req.URL}
	if m.method == "" {
		m.method = http.MethodGet
	}
	switch {
	case scheme != "":
		m.scheme = scheme
	case req.URL != nil && req.URL.Scheme != "":
		m.scheme = req.URL.Scheme
	case req.TLS != nil:
		m.scheme = "https"
	default:
		m.scheme = "http"
	}
	m.scheme = strings.ToLower(m.scheme)
	host := req.Host
	if host == "" && req.URL != nil {
		host = req.URL.Host
	}
	m.authority = normalizeAuthority(host, m.scheme)
	if m.uri == nil {
		m.uri = &url.URL{Path: "/"}
	}
}

func responseMessage(resp *http.Response, scheme string) *message {
	m := &message{status: resp.StatusCode, header: resp.Header}
	if resp.Request != nil {
		m.req = requestMessage(resp.Request, scheme)
	}
	return m
}

// normalizeAuthority lower-cases the host and drops a default port
// (RFC 9421 2.2.3).
func normalizeAuthority(host, scheme string) string {
	host = strings.ToLower(host)
	if h, p, ok := cutPort(host); ok {
		if (scheme == "https" && p == "443") || (scheme == "http" && p == "80") {
			return h
		}
	}
	return host
}

func cutPort(host string) (h, port string, ok bool) {
	i := strings.LastIndexByte(host, ':')
	if i < 0 || strings.Contains(host[i:], "]") {
		return host, "", false
	}
	return host[:i], host[i+1:], true
}

// requestTarget is the origin-form target: escaped path plus query.
func (m *message) requestTarget(withQuery bool) string {
	p := m.uri.EscapedPath()
	if p == "" {
		p = "/"
	}
	if withQuery && (m.uri.RawQuery != "" || m.uri.ForceQuery) {
		p += "?" + m.uri.RawQuery
	}
	return p
}

// appendRequestTarget appends requestTarget(withQuery) to b.
func (m *message) appendRequestTarget(b []byte, withQuery bool) []byte {
	if m.uri.RawPath == "" && m.uri.Path != "" && !needsEscape(m.uri.Path) {
		b = append(b, m.uri.Path...) // EscapedPath would return Path itself
	} else {
		b = append(b, m.requestTarget(false)...)
	}
	if withQuery && (m.uri.RawQuery != "" || m.uri.ForceQuery) {
		b = append(b, '?')
		b = append(b, m.uri.RawQuery...)
	}
	return b
}

// needsEscape reports whether a path has a byte url.URL.EscapedPath
// would escape; a conservative test (letters, digits, and -._~/).
func needsEscape(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
			return true
		}
	}
	return false
}

// fieldLines returns a header's field lines, each trimmed, or false when
// the field is absent. Host is not in http.Header, so it comes from the
// authority as sent.
func (m *message) fieldLines(name string) ([]string, bool) {
	if name == "host" && m.status == 0 {
		if v := m.header.Values("Host"); len(v) > 0 {
			return trimAll(v), true
		}
		return []string{m.authority}, m.authority != ""
	}
	v := m.header[canonicalName(name)]
	if len(v) == 0 {
		return nil, false
	}
	return trimAll(v), true
}

// commonFields spares the allocation of canonicalising the names signatures
// cover most often.
var commonFields = map[string]string{
	"date": "Date", "digest": "Digest", "content-digest": "Content-Digest", "content-type": "Content-Type",
	"content-length": "Content-Length", "host": "Host", "accept": "Accept", "user-agent": "User-Agent",
}

func canonicalName(name string) string {
	if c, ok := commonFields[name]; ok {
		return c
	}
	return http.CanonicalHeaderKey(name)
}

func trimAll(v []string) []string {
	if len(v) == 1 && !needsTrim(v[0]) {
		return v // the common case needs no copy
	}
	out := make([]string, len(v))
	for i, s := range v {
		// obs-fold (CRLF then whitespace) becomes one space; RFC 9110 5.5.
		for {
			j := strings.Index(s, "\r\n")
			if j < 0 {
				break
			}
			s = s[:j] + " " + strings.TrimLeft(s[j+2:], " \t")
		}
		out[i] = strings.Trim(s, " \t")
	}
	return out
}

func needsTrim(s string) bool {
	if s == "" {
		return false
	}
	if c := s[0]; c == ' ' || c == '\t' {
		return true
	}
	if c := s[len(s)-1]; c == ' ' || c == '\t' {
		return true
	}
	return strings.Contains(s, "\r\n")
}

// headerGet is h.Get for a name already in canonical form.
func headerGet(h http.Header, canonical string) string {
	if v := h[canonical]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// queryParam returns the re-encoded value of the named query parameter
// (RFC 9421 2.2.8). A name present more than once is refused, as the RFC
// requires. The query is decoded once per message however many
// @query-param components a signature lists, so hostile input costs one
// pass over the query, not one per component.
func (m *message) queryParam(want string) (string, error) {
	if err := m.indexQuery(); err != nil {
		return "", err
	}
	switch e := m.query[want]; e.n {
	case 0:
		return "", fmt.Errorf("%w: query parameter %q", ErrMissingComponent, want)
	case 1:
		return pctEncode(e.val), nil
	}
	return "", fmt.Errorf("%w: query parameter %q repeated", ErrMalformed, want)
}

// indexQuery fills m.query, keyed by re-encoded name, once per message.
func (m *message) indexQuery() error {
	if m.query == nil {
		idx := make(map[string]queryEntry)
		for part := range strings.SplitSeq(m.uri.RawQuery, "&") {
			if part == "" {
				continue
			}
			k, v, _ := strings.Cut(part, "=")
			dk, err1 := url.QueryUnescape(k)
			dv, err2 := url.QueryUnescape(v)
			if err1 != nil || err2 != nil {
				m.queryErr = fmt.Errorf("%w: query is not form-encoded", ErrMalformed)
				break
			}
			ek := pctEncode(dk)
			e := idx[ek]
			e.val, e.n = dv, e.n+1
			idx[ek] = e
		}
		m.query = idx
	}
	return m.queryErr
}

// queryEntry is a decoded query parameter's value and how often its name
// occurs.
type queryEntry struct {
	val string
	n   int
}

// pctEncode percent-encodes everything but unreserved characters, with
// space as %20, which is how the RFC's examples encode query parameters.
func pctEncode(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

// dictionary parses the named field as a dictionary once per message:
// a signature may name many of its members with ;key, and parsing the
// whole field for each would cost their product.
func (m *message) dictionary(name string, lines []string) (*httpsfv.Dictionary, error) {
	if d, ok := m.dicts[name]; ok {
		return d, nil
	}
	d, err := httpsfv.UnmarshalDictionary(lines)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not a dictionary", ErrMalformed, name)
	}
	if m.dicts == nil {
		m.dicts = make(map[string]*httpsfv.Dictionary)
	}
	m.dicts[name] = d
	return d, nil
}
