package sig

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

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

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

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

// parseHTTPDate is http.ParseTime with a fast path for the IMF-fixdate
// everyone sends ("Sun, 06 Nov 1994 08:49:37 GMT"), in its exact case
// and with a weekday that matches the date. Anything else, including
// what the fast path would have to normalise, goes to http.ParseTime, so
// the results are the same.
func parseHTTPDate(s string) (time.Time, error) {
	if t, ok := parseIMFFixdate(s); ok {
		return t, nil
	}
	return http.ParseTime(s)
}

var (
	imfDays   = [7]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
	imfMonths = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
)

func parseIMFFixdate(s string) (time.Time, bool) {
	if len(s) != 29 || s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' ||
		s[19] != ':' || s[22] != ':' || s[25] != ' ' || s[26:] != "GMT" {
		return time.Time{}, false
	}
	num := func(a, b int) int {
		n := 0
		for i := a; i < b; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	day, year, hh, mm, ss := num(5, 7), num(12, 16), num(17, 19), num(20, 22), num(23, 25)
	if day < 1 || year < 0 || hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 59 {
		return time.Time{}, false
	}
	month := 0
	for i, name := range imfMonths {
		if s[8:11] == name {
			month = i + 1
			break
		}
	}
	if month == 0 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hh, mm, ss, 0, time.UTC)
	if t.Day() != day || imfDays[t.Weekday()] != s[:3] {
		return time.Time{}, false // out of range for the month, or another weekday
	}
	return t, true
}

// bufPool holds buffers for signature bases and signing strings, which a
// verification needs only until the signature is checked.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) <= 64<<10 { // let the odd huge one go
		*b = (*b)[:0]
		bufPool.Put(b)
	}
}
