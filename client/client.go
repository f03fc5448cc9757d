package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Resolver looks up the addresses of a host. A *net.Resolver satisfies it.
type Resolver interface {
	// LookupNetIP returns host's addresses; network is "ip", "ip4" or "ip6".
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// SignFunc signs an outgoing request; the client calls it before the first
// request and again before every redirect hop, with that hop's URL.
type SignFunc func(*http.Request) error

// Config configures a Client. A nil *Config means defaults.
type Config struct {
	// Policy selects the refused address ranges. Defaults to PolicyDefault
	// (PolicyPublic).
	Policy Policy
	// AllowPrivate admits these otherwise refused networks, for development
	// or a NAT64 gateway, as Mastodon's ALLOWED_PRIVATE_ADDRESSES. Defaults
	// to none.
	AllowPrivate []netip.Prefix
	// AllowOnion permits hidden-service hosts (.onion and .i2p); their
	// resolved addresses are still checked. Defaults to false.
	AllowOnion bool
	// Resolver resolves host names. Defaults to net.DefaultResolver.
	Resolver Resolver
	// MaxBodyBytes caps response bodies unless DoOpts.Stream is set.
	// Defaults to MaxBodyBytesDefault (1 MiB).
	MaxBodyBytes int64
	// MaxRedirects is how many redirect hops of a GET or HEAD the client
	// follows; NoRedirects (any negative value) follows none, and any
	// redirect is then a *TooManyRedirectsError. Defaults to
	// MaxRedirectsDefault (3).
	MaxRedirects int
	// AllowSchemeDowngrade lets a redirect take an https request to http,
	// for development against a plain-HTTP server. Otherwise such a hop is
	// ErrSchemeDowngrade, before it is signed or sent: an authorized
	// fetch must not leave TLS. Defaults to false.
	AllowSchemeDowngrade bool
	// Timeout bounds a whole request, from resolving the host to reading the
	// end of the body (for DoOpts.Stream, to the response headers). Defaults
	// to TimeoutDefault.
	Timeout time.Duration
	// ResolveTimeout bounds one host lookup. Defaults to ResolveTimeoutDefault.
	ResolveTimeout time.Duration
	// DialTimeout bounds connecting to one address. Defaults to
	// DialTimeoutDefault.
	DialTimeout time.Duration
	// TLSHandshakeTimeout bounds the TLS handshake. Defaults to
	// TLSHandshakeTimeoutDefault.
	TLSHandshakeTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for the response headers after
	// the request is written. Defaults to ResponseHeaderTimeoutDefault.
	ResponseHeaderTimeout time.Duration
	// MaxResponseHeaderBytes bounds the response headers. Defaults to
	// MaxResponseHeaderBytesDefault.
	MaxResponseHeaderBytes int64
	// MaxIdleConnsPerHost bounds the pooled idle connections per host.
	// Defaults to MaxIdleConnsPerHostDefault.
	MaxIdleConnsPerHost int
	// MaxConnsPerHost bounds the connections per host, dialling, active and
	// idle; further requests wait for one. Defaults to MaxConnsPerHostDefault
	// (no bound).
	MaxConnsPerHost int
	// DisableCompression stops the client asking for gzip. Defaults to false.
	DisableCompression bool
	// TLSConfig is cloned for TLS connections; the server name is always the
	// URL's host. Defaults to nil (system roots).
	TLSConfig *tls.Config
	// UserAgent is sent on every request that sets none. Defaults to
	// UserAgentDefault.
	UserAgent string
	// Logger receives debug logs of refusals. Defaults to discarding.
	Logger *slog.Logger
}

// Defaults, calibrated on Mastodon (connect 5 s, read 10 s, 30 s overall,
// DNS 5 s) and the 1 MiB document bound.
const (
	MaxBodyBytesDefault           = 1 << 20
	MaxRedirectsDefault           = 3
	TimeoutDefault                = 30 * time.Second
	ResolveTimeoutDefault         = 5 * time.Second
	DialTimeoutDefault            = 5 * time.Second
	TLSHandshakeTimeoutDefault    = 5 * time.Second
	ResponseHeaderTimeoutDefault  = 10 * time.Second
	MaxResponseHeaderBytesDefault = 64 << 10
	MaxIdleConnsPerHostDefault    = 16
	MaxConnsPerHostDefault        = 0
	UserAgentDefault              = "fedkit (+https://github.com/fedkit/fedkit)"
)

// maxDialAddrs bounds the addresses tried per connection.
const maxDialAddrs = 4

// NoRedirects as Config.MaxRedirects makes every redirect an error.
const NoRedirects = -1

// withDefaults returns a copy of cfg with zero fields filled.
func (cfg *Config) withDefaults() Config {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	if c.Resolver == nil {
		c.Resolver = net.DefaultResolver
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = MaxBodyBytesDefault
	}
	if c.MaxRedirects == 0 {
		c.MaxRedirects = MaxRedirectsDefault
	} else if c.MaxRedirects < 0 {
		c.MaxRedirects = NoRedirects
	}
	if c.Timeout == 0 {
		c.Timeout = TimeoutDefault
	}
	if c.ResolveTimeout == 0 {
		c.ResolveTimeout = ResolveTimeoutDefault
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = DialTimeoutDefault
	}
	if c.TLSHandshakeTimeout == 0 {
		c.TLSHandshakeTimeout = TLSHandshakeTimeoutDefault
	}
	if c.ResponseHeaderTimeout == 0 {
		c.ResponseHeaderTimeout = ResponseHeaderTimeoutDefault
	}
	if c.MaxResponseHeaderBytes == 0 {
		c.MaxResponseHeaderBytes = MaxResponseHeaderBytesDefault
	}
	if c.MaxIdleConnsPerHost == 0 {
		c.MaxIdleConnsPerHost = MaxIdleConnsPerHostDefault
	}
	if c.UserAgent == "" {
		c.UserAgent = UserAgentDefault
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

func (c *Config) validate() error {
	if c.Policy != PolicyPublic && c.Policy != PolicyNonLocal {
		return fmt.Errorf("client: unknown Policy %d", c.Policy)
	}
	for _, p := range c.AllowPrivate {
		if !p.IsValid() {
			return errors.New("client: invalid prefix in AllowPrivate")
		}
	}
	for name, v := range map[string]int64{
		"MaxBodyBytes": c.MaxBodyBytes, "Timeout": int64(c.Timeout), "ResolveTimeout": int64(c.ResolveTimeout),
		"DialTimeout": int64(c.DialTimeout), "TLSHandshakeTimeout": int64(c.TLSHandshakeTimeout),
		"ResponseHeaderTimeout": int64(c.ResponseHeaderTimeout), "MaxResponseHeaderBytes": c.MaxResponseHeaderBytes,
		"MaxIdleConnsPerHost": int64(c.MaxIdleConnsPerHost), "MaxConnsPerHost": int64(c.MaxConnsPerHost),
	} {
		if v < 0 {
			return fmt.Errorf("client: negative %s", name)
		}
	}
	return nil
}

// noOpts is read only.
var noOpts DoOpts

// DoOpts are per-request options for DoWith.
type DoOpts struct {
	// Sign signs the request and each redirect hop.
	Sign SignFunc
	// Stream returns the body uncapped for the caller to stream, and lifts
	// Config.Timeout once the response headers are in: the request's
	// context bounds the rest.
	Stream bool
}

// Client is the guarded HTTP client. It is safe for concurrent use.
type Client struct {
	// tr is the one connection pool; hc wraps it for the rare request
	// roundTrip leaves to http.Client.
	tr    *http.Transport
	hc    *http.Client
	cfg   Config
	guard guard
	// dial connects to one checked address; tests replace it to observe and
	// redirect connection attempts.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// uaValue is shared by requests' headers; its capacity is 1, so an Add
	// reallocates rather than writing into it.
	uaValue []string
}

// New builds a Client from cfg; a nil cfg means defaults.
func New(cfg *Config) (*Client, error) {
	c := &Client{cfg: cfg.withDefaults()}
	if err := c.cfg.validate(); err != nil {
		return nil, err
	}
	allow := make([]netip.Prefix, len(c.cfg.AllowPrivate))
	for i, p := range c.cfg.AllowPrivate {
		allow[i] = p.Masked()
	}
	c.cfg.AllowPrivate = allow
	c.uaValue = []string{c.cfg.UserAgent}
	c.guard = guard{policy: c.cfg.Policy, allow: allow, allowOnion: c.cfg.AllowOnion}

	d := &net.Dialer{
		Timeout:   c.cfg.DialTimeout,
		KeepAlive: 30 * time.Second,
		// The address was checked before dialling; checking the socket's
		// own address again costs nothing and holds even if a future
		// change dials something else.
		Control: c.control,
	}
	c.dial = d.DialContext
	var tlsCfg *tls.Config
	if c.cfg.TLSConfig != nil {
		tlsCfg = c.cfg.TLSConfig.Clone()
	}
	tr := &http.Transport{
		Proxy:               nil, // an environment proxy would bypass the guard
		DialContext:         c.dialContext,
		TLSClientConfig:     tlsCfg,
		TLSHandshakeTimeout: c.cfg.TLSHandshakeTimeout,
		// ResponseHeaderTimeout is enforced by the request's own timer (see
		// body.start), not by a second timer in the transport.
		MaxResponseHeaderBytes: c.cfg.MaxResponseHeaderBytes,
		DisableCompression:     c.cfg.DisableCompression,
		MaxIdleConnsPerHost:    c.cfg.MaxIdleConnsPerHost,
		MaxConnsPerHost:        c.cfg.MaxConnsPerHost,
		IdleConnTimeout:        90 * time.Second,
		ExpectContinueTimeout:  time.Second,
		ForceAttemptHTTP2:      true,
	}
	c.tr = tr
	c.hc = &http.Client{
		Transport: tr,
		// The client follows redirects itself, checking and re-signing.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c, nil
}

// CloseIdleConnections closes pooled connections not in use.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// control re-checks the address of the socket about to connect.
func (c *Client) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("client: unparsable dial address %q: %w", address, err)
	}
	if r, ok := c.guard.check(ap.Addr()); !ok {
		return &BlockedError{Host: ap.Addr().String(), Addr: ap.Addr(), Range: r}
	}
	return nil
}

// dialContext resolves the host once, refuses it if any address is refused,
// and dials the checked addresses themselves, so a second resolution cannot
// swap in another address (DNS rebinding).
func (c *Client) dialContext(ctx context.Context, network, hostport string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("client: bad port %q", portStr)
	}
	addrs, err := c.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	// A name that mixes public and refused addresses is refused whole: it is
	// the shape of a rebinding or split-horizon trick, and failing closed is
	// simpler to reason about than dialling around the bad answer.
	for _, a := range addrs {
		if r, ok := c.guard.check(a); !ok {
			c.cfg.Logger.DebugContext(ctx, "client: refused address", "host", host, "addr", a, "range", r)
			return nil, &BlockedError{Host: bounded(host), Addr: a, Range: r}
		}
	}
	// Try a few addresses, as Mastodon does, so a host with many dead ones
	// cannot hold the request for DialTimeout each.
	var firstErr error
	for _, a := range addrs[:min(len(addrs), maxDialAddrs)] {
		conn, err := c.dial(ctx, network, netip.AddrPortFrom(a.Unmap(), uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// resolve returns the addresses of host: the literal itself, or the answer of
// Config.Resolver.
func (c *Client) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.ResolveTimeout)
	defer cancel()
	addrs, err := c.cfg.Resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	return addrs, nil
}

// Do sends req through the guard: the URL and every resolved address are
// checked, a GET's or HEAD's redirects are followed up to Config.MaxRedirects
// hops, and the body is capped at Config.MaxBodyBytes. The caller closes the
// body; reading past the cap yields ErrTooLarge.
func (c *Client) Do(req *http.Request) (*http.Response, error) { return c.DoWith(req, nil) }

// DoWith sends req as Do does, with per-request options: a signing hook
// called for the request and each redirect hop, and streaming.
func (c *Client) DoWith(req *http.Request, opts *DoOpts) (*http.Response, error) {
	if opts == nil {
		opts = &noOpts
	}
	if req.URL == nil {
		return nil, fmt.Errorf("%w: nil URL", ErrInvalidURL)
	}
	if err := c.guard.checkURL(req.URL); err != nil {
		closeBody(req)
		return nil, err
	}
	ctx, cancel := context.WithCancel(req.Context())
	// st carries the request's timer and becomes the response body, so the
	// timer is released when the caller closes it.
	st := &body{cancel: cancel}
	ctx = st.start(ctx, c.cfg.Timeout, c.cfg.ResponseHeaderTimeout)

	// The caller's headers stay untouched: each hop starts from them and is
	// signed afresh. They are copied only when this request changes them.
	r := req.WithContext(ctx)
	needUA := req.Header.Get("User-Agent") == ""
	if needUA || opts.Sign != nil || r.Header == nil {
		r.Header = make(http.Header, len(req.Header)+1)
		for k, v := range req.Header {
			r.Header[k] = slices.Clip(v) // Add on the copy must not write into the caller's slice
		}
		if needUA {
			r.Header["User-Agent"] = c.uaValue
		}
	}
	if opts.Sign != nil {
		if err := opts.Sign(r); err != nil {
			closeBody(req)
			return st.fail(err)
		}
	}
	var visited map[string]bool // made at the first redirect
	for hops := 0; ; hops++ {
		st.sending()
		resp, err := c.roundTrip(r)
		if err != nil {
			return st.fail(err)
		}
		st.headersIn()
		loc := resp.Header.Get("Location")
		if !isRedirect(resp.StatusCode) || loc == "" {
			return c.finish(resp, opts, st)
		}
		discard(resp)
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return st.fail(&RedirectError{Method: r.Method, URL: bounded(r.URL.String()), StatusCode: resp.StatusCode, Location: bounded(loc)})
		}
		if hops >= c.cfg.MaxRedirects {
			return st.fail(&TooManyRedirectsError{Max: max(c.cfg.MaxRedirects, 0), URL: bounded(r.URL.String()), StatusCode: resp.StatusCode, Location: bounded(loc)})
		}
		next, err := r.URL.Parse(loc)
		if err != nil {
			return st.fail(fmt.Errorf("%w: redirect Location %q: %s", ErrInvalidURL, bounded(loc), bounded(err.Error())))
		}
		next.Fragment, next.RawFragment = "", ""
		if strings.EqualFold(r.URL.Scheme, "https") && strings.EqualFold(next.Scheme, "http") && !c.cfg.AllowSchemeDowngrade {
			return st.fail(fmt.Errorf("%w: %s redirected (%d) to %s", ErrSchemeDowngrade, bounded(r.URL.String()), resp.StatusCode, bounded(loc)))
		}
		if err := c.guard.checkURL(next); err != nil {
			return st.fail(err)
		}
		if visited == nil {
			visited = map[string]bool{urlKey(req.URL): true}
		}
		key := urlKey(next)
		if visited[key] {
			return st.fail(fmt.Errorf("%w: back to %s", ErrRedirectLoop, bounded(key)))
		}
		visited[key] = true
		r, err = c.hop(ctx, r, next, req.Header)
		if err != nil {
			return st.fail(err)
		}
		if opts.Sign != nil {
			if err := opts.Sign(r); err != nil {
				return st.fail(err)
			}
		}
	}
}

// roundTrip sends one request of an exchange, without following redirects.
// It calls the pooled transport directly: the client follows redirects
// itself, so http.Client's per-request redirect bookkeeping (a copy of the
// headers, a closure, a slice) would be pure cost. Errors come wrapped in
// *url.Error as http.Client wraps them.
func (c *Client) roundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.User != nil {
		// http.Client turns credentials in the URL into Basic auth; leave
		// that rare case to it rather than copy the rule.
		return c.hc.Do(r)
	}
	if r.RequestURI != "" {
		closeBody(r)
		return nil, &url.Error{Op: urlErrorOp(r.Method), URL: r.URL.String(), Err: errors.New("http: Request.RequestURI can't be set in client requests")}
	}
	resp, err := c.tr.RoundTrip(r)
	if err != nil {
		// As http.Client does: an https request answered in plain HTTP.
		if tlsErr, ok := err.(tls.RecordHeaderError); ok && string(tlsErr.RecordHeader[:]) == "HTTP/" {
			err = http.ErrSchemeMismatch
		}
		return nil, &url.Error{Op: urlErrorOp(r.Method), URL: r.URL.String(), Err: err}
	}
	return resp, nil
}

// urlErrorOp is http.Client's Op for a *url.Error: "Get" for GET.
func urlErrorOp(method string) string {
	if method == "" {
		return "Get"
	}
	return method[:1] + strings.ToLower(method[1:])
}

// hop builds the request for one redirect hop from the caller's headers.
func (c *Client) hop(ctx context.Context, prev *http.Request, next *url.URL, base http.Header) (*http.Request, error) {
	r, err := http.NewRequestWithContext(ctx, prev.Method, next.String(), nil)
	if err != nil {
		return nil, err
	}
	r.Header = base.Clone()
	if r.Header == nil {
		r.Header = http.Header{}
	}
	// Credentials are for the origin they were given to.
	if next.Host != prev.URL.Host || next.Scheme != prev.URL.Scheme {
		for _, h := range []string{"Authorization", "Cookie", "Proxy-Authorization"} {
			r.Header.Del(h)
		}
	}
	if r.Header.Get("User-Agent") == "" {
		r.Header.Set("User-Agent", c.cfg.UserAgent)
	}
	return r, nil
}

// finish applies the size cap and hands the request's state to the body.
func (c *Client) finish(resp *http.Response, opts *DoOpts, st *body) (*http.Response, error) {
	st.rc = resp.Body
	if opts.Stream {
		// The caller's context bounds a stream; the timer covered the headers.
		st.stopTimer()
		st.left = -1
		resp.Body = st
		return resp, nil
	}
	limit := c.cfg.MaxBodyBytes
	// A HEAD's Content-Length describes a body that never comes.
	if resp.ContentLength > limit && resp.Request.Method != http.MethodHead {
		discardClose(resp)
		st.release()
		return nil, fmt.Errorf("%w: Content-Length %d over the %d-byte limit", ErrTooLarge, resp.ContentLength, limit)
	}
	st.left, st.limit = limit, limit
	resp.Body = st
	return resp, nil
}

// wrapTimeout marks timeouts with ErrTimeout, so callers classify them by
// errors.Is whichever layer gave up.
func wrapTimeout(err error, timedOut *atomic.Bool) error {
	if err == nil || errors.Is(err, ErrTimeout) {
		return err
	}
	var ne net.Error
	if timedOut.Load() || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return err
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// urlKey identifies a URL for loop detection.
func urlKey(u *url.URL) string {
	v := *u
	v.Fragment, v.RawFragment = "", ""
	v.Scheme = strings.ToLower(v.Scheme)
	v.Host = strings.ToLower(v.Host)
	return v.String()
}

// bounded trims remote-supplied text kept in errors.
func bounded(s string) string {
	const n = 256
	if len(s) > n {
		s = s[:n] + "..."
	}
	return strings.ToValidUTF8(s, "?")
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// discard drains a little of a body we drop, so the connection can be
// reused, and closes it.
func discard(resp *http.Response) { discardClose(resp) }

func discardClose(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
	resp.Body.Close()
}

// ReadAll reads resp's body to the end and closes it. Over the cap it returns
// ErrTooLarge, never a truncated document.
func ReadAll(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}
