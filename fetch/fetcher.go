package fetch

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/sig"
)

// Defaults for Config.
const (
	MaxDocumentBytesDefault = 1 << 20
	MaxHTMLBytesDefault     = 1 << 20
	TimeoutDefault          = 30 * time.Second
	FirstSchemeDefault      = sig.SchemeCavage
)

// AcceptActivityPub is the Accept header of document fetches, Mastodon's.
const AcceptActivityPub = "application/activity+json, application/ld+json"

// RequestSigner signs an outgoing GET with the given scheme. *sig.Signer
// satisfies it.
type RequestSigner interface {
	// Sign adds a signature in scheme to req's headers.
	Sign(req *http.Request, scheme sig.Scheme) error
}

var _ RequestSigner = (*sig.Signer)(nil)

// Config configures a Fetcher. A nil *Config means defaults.
type Config struct {
	// Signer signs every document GET (authorized fetch), and each of its
	// redirect hops. Defaults to nil: unsigned fetches (a typed nil, such as
	// a nil *sig.Signer, counts as nil).
	Signer RequestSigner
	// FirstScheme is the signature scheme tried on a host with no
	// remembered scheme. Defaults to the key's, when the Signer tells its
	// public key (a *sig.Signer does): sig.SchemeRFC9421 for Ed25519
	// (Fedify's draft-cavage verifier is RSA-only and answers 500), else
	// FirstSchemeDefault (draft-cavage).
	FirstScheme sig.Scheme
	// Schemes remembers per host which scheme worked; the Deliverer's
	// store fits, so deliveries and fetches can share one. Defaults to a
	// sig.HostSchemes of sig.HostSchemesMaxDefault hosts.
	Schemes sig.SchemeStore
	// MaxDocumentBytes caps a JSON document. Defaults to MaxDocumentBytesDefault.
	MaxDocumentBytes int64
	// MaxHTMLBytes caps how much of a web page is read looking for an
	// alternate link. Defaults to MaxHTMLBytesDefault.
	MaxHTMLBytes int64
	// Timeout bounds one fetch, body included. Defaults to TimeoutDefault.
	Timeout time.Duration
	// PlainHTTPWebFinger asks every host's WebFinger, host-meta and NodeInfo
	// over http. For tests only. Defaults to false (onion hosts always use http).
	PlainHTTPWebFinger bool
	// Gateways are FEP-ef61 gateway base URLs ("https://gw.example") that
	// portable ap:// objects are fetched from, in order. Defaults to none:
	// ap:// lookups fail with ErrUnsupported.
	Gateways []string
	// Alive, when set, is told of every host that answers a fetch with a
	// document (200): pass deliver's availability store, so a host seen
	// alive here gets deliveries again. Defaults to nil.
	Alive AliveRecorder
	// Now is the clock that turns a Retry-After date into a wait. Defaults
	// to time.Now.
	Now func() time.Time
	// Logger receives debug logs. Defaults to discarding.
	Logger *slog.Logger
	// TracerProvider receives a span per fetch (fetch.get) and one per
	// request it sent: each redirect hop and a signed retry (package doc,
	// "Telemetry"). Defaults to OpenTelemetry's global provider, a no-op
	// until the application installs one.
	TracerProvider trace.TracerProvider
	// MeterProvider receives the fedkit.fetch.fetches counter. Defaults to
	// OpenTelemetry's global provider, a no-op until the application
	// installs one.
	MeterProvider metric.MeterProvider
}

// Fetcher fetches documents through a guarded client and decides what to
// believe of them. It is safe for concurrent use.
type Fetcher struct {
	c   *client.Client
	cfg Config
	log *slog.Logger
	tel *telemetry
}

// New returns a Fetcher using c, which the caller owns.
func New(c *client.Client, cfg *Config) (*Fetcher, error) {
	if c == nil {
		return nil, errors.New("fetch: New: nil client")
	}
	var conf Config
	if cfg != nil {
		conf = *cfg
	}
	conf.Signer = nilSigner(conf.Signer)
	if conf.FirstScheme != 0 && conf.FirstScheme != sig.SchemeCavage && conf.FirstScheme != sig.SchemeRFC9421 {
		return nil, fmt.Errorf("fetch: New: unknown FirstScheme %d", conf.FirstScheme)
	}
	if conf.Schemes == nil {
		conf.Schemes = sig.NewHostSchemes(0)
	}
	if conf.MaxDocumentBytes <= 0 {
		conf.MaxDocumentBytes = MaxDocumentBytesDefault
	}
	if conf.MaxHTMLBytes <= 0 {
		conf.MaxHTMLBytes = MaxHTMLBytesDefault
	}
	if conf.Timeout <= 0 {
		conf.Timeout = TimeoutDefault
	}
	if conf.Now == nil {
		conf.Now = time.Now
	}
	log := conf.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &Fetcher{c: c, cfg: conf, log: log}
	f.instrument()
	return f, nil
}

// response is a fetched response with its body read.
type response struct {
	url    *url.URL // final URL, after redirects
	status int
	header http.Header
	body   []byte
	// truncated says the body was cut at getOpts.max.
	truncated bool
}

type getOpts struct {
	accept string
	sign   bool
	// max caps the body; over it is client.ErrTooLarge unless
	// truncate is set, when the first max bytes are kept.
	max      int64
	truncate bool
}

// get performs one budgeted GET. Non-200 responses come back without a
// body for the caller to classify.
func (f *Fetcher) get(ctx context.Context, raw string, o getOpts) (*response, error) {
	ctx, tr := f.startFetch(ctx, raw, o.sign && f.cfg.Signer != nil)
	r, err := f.getTraced(ctx, raw, o, tr)
	status := 0
	if r != nil {
		status = r.status
	}
	tr.end(ctx, status, err)
	return r, err
}

// getTraced is get within its fetch's span.
func (f *Fetcher) getTraced(ctx context.Context, raw string, o getOpts, tr *trip) (*response, error) {
	if err := spend(ctx); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	// One request serves both knocks of a signed fetch: the client signs a
	// copy and leaves the caller's request untouched.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil || (req.URL.Scheme != "https" && req.URL.Scheme != "http") {
		return nil, fmt.Errorf("fetch: %w: URL %s", client.ErrInvalidURL, clip(raw))
	}
	req.Header.Set("Accept", o.accept)
	var resp *http.Response
	if o.sign && f.cfg.Signer != nil {
		resp, err = f.doSigned(ctx, req, tr)
	} else {
		resp, err = f.do(req, tr.sign(nil, 0))
	}
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := &response{url: resp.Request.URL, status: resp.StatusCode, header: resp.Header}
	if resp.StatusCode != http.StatusOK {
		// Drain a little so the connection can be reused.
		_, _ = io.CopyN(io.Discard, resp.Body, 4096)
		return r, nil
	}
	f.seenAlive(ctx, resp.Request.URL.Host)
	max := o.max
	if resp.ContentLength > max && !o.truncate {
		return nil, tooLarge(raw, max)
	}
	if resp.ContentLength > max {
		r.truncated = true
	}
	if resp.ContentLength >= 0 && resp.ContentLength <= max {
		// The length is known and within the cap: read exactly that into
		// one buffer (the transport refuses a body of another length).
		body := make([]byte, resp.ContentLength)
		if _, err := io.ReadFull(resp.Body, body); err != nil {
			return nil, fmt.Errorf("fetch: reading %s: %w", clip(raw), err)
		}
		r.body = body
		return r, nil
	}
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("fetch: reading %s: %w", clip(raw), err)
	}
	if n > max {
		if !o.truncate {
			return nil, tooLarge(raw, max)
		}
		buf.Truncate(int(max))
		r.truncated = true
	}
	r.body = buf.Bytes()
	return r, nil
}

func (f *Fetcher) do(req *http.Request, sign client.SignFunc) (*http.Response, error) {
	return f.c.DoWith(req, &client.DoOpts{Sign: sign, Stream: true})
}

// refused reports the statuses on which a signed GET to a host with no
// scheme remembered is tried once more with the other scheme: what servers
// answer a signature they do not read (Mastodon 401, some 400, PeerTube
// 403 to RFC 9421).
func refused(code int) bool {
	return code == http.StatusBadRequest || code == http.StatusUnauthorized || code == http.StatusForbidden
}

// doSigned signs with the host's remembered scheme, and then only with it:
// a refusal of a scheme the host accepted before is about the document.
// A host with none remembered gets the first scheme (FirstScheme, or the
// key's: see firstScheme) and, on a refusal, one knock with the other,
// through the same guarded client; whichever is accepted is remembered.
// When both are refused (400, 401 or 403), the first answer stands, since
// it is what the server said to the scheme it reads, unless it was a 401 or
// 403 and the second a 400: the server read the second scheme and refused
// the request. Any other answer to the second (a 404, a 5xx) stands.
func (f *Fetcher) doSigned(ctx context.Context, req *http.Request, tr *trip) (*http.Response, error) {
	host := strings.ToLower(req.URL.Host)
	first, known, err := f.cfg.Schemes.Scheme(ctx, host)
	if err != nil {
		f.log.Debug("fetch: scheme store", "host", host, "err", err)
		known = false
	}
	signer := f.cfg.Signer
	if !known {
		first = f.firstScheme(signer)
	}
	with := func(s sig.Scheme) client.SignFunc { return tr.sign(signer, s) }
	resp, err := f.do(req, with(first))
	if err != nil {
		return nil, err
	}
	if known || !refused(resp.StatusCode) {
		if !known && resp.StatusCode < 400 {
			f.remember(ctx, host, first)
		}
		return resp, nil
	}
	// Keep the first answer, without its body, in case it stands.
	_, _ = io.CopyN(io.Discard, resp.Body, 4096)
	resp.Body.Close()
	resp.Body = http.NoBody
	tr.endRequest(resp.StatusCode, nil)
	second, err := f.do(req, with(other(first)))
	if err != nil {
		tr.endRequest(0, err)
		if ctx.Err() != nil {
			return nil, err
		}
		return resp, nil
	}
	if !refused(second.StatusCode) {
		// Fetched, or an answer about the document (404, 410, 5xx) from a
		// server that read the second scheme.
		if second.StatusCode < 400 {
			f.remember(ctx, host, other(first))
		}
		return second, nil
	}
	if second.StatusCode == http.StatusBadRequest && resp.StatusCode != http.StatusBadRequest {
		return second, nil
	}
	_, _ = io.CopyN(io.Discard, second.Body, 4096)
	second.Body.Close()
	tr.endRequest(second.StatusCode, nil)
	return resp, nil
}

// firstScheme is the scheme for a host with none remembered: FirstScheme
// when set, else RFC 9421 for an Ed25519 key, whose draft-cavage signature
// Fedify's RSA-only verifier answers with 500, and draft-cavage for the
// rest, which every server reads. A signer that does not tell its public
// key gets draft-cavage.
func (f *Fetcher) firstScheme(s RequestSigner) sig.Scheme {
	if f.cfg.FirstScheme != 0 {
		return f.cfg.FirstScheme
	}
	if p, ok := s.(interface{ Public() crypto.PublicKey }); ok {
		if _, ed := p.Public().(ed25519.PublicKey); ed {
			return sig.SchemeRFC9421
		}
	}
	return sig.SchemeCavage
}

func (f *Fetcher) remember(ctx context.Context, host string, s sig.Scheme) {
	if err := f.cfg.Schemes.SetScheme(ctx, host, s); err != nil {
		f.log.Debug("fetch: scheme store", "host", host, "err", err)
	}
}

func other(s sig.Scheme) sig.Scheme {
	if s == sig.SchemeRFC9421 {
		return sig.SchemeCavage
	}
	return sig.SchemeRFC9421
}

// statusError builds the error for a non-200 response.
func (f *Fetcher) statusError(r *response) error {
	e := &StatusError{URL: r.url.String(), StatusCode: r.status}
	if v := r.header.Get("Retry-After"); v != "" {
		if s, err := strconv.Atoi(v); err == nil && s > 0 {
			e.RetryAfter = time.Duration(s) * time.Second
		} else if t, err := http.ParseTime(v); err == nil {
			if d := t.Sub(f.cfg.Now()); d > 0 {
				e.RetryAfter = d
			}
		}
	}
	return e
}

// nilSigner turns a typed nil (a nil *sig.Signer in the interface) into
// a nil interface, so it means "unsigned" instead of a panic mid-fetch.
func nilSigner(s RequestSigner) RequestSigner {
	if s == nil {
		return nil
	}
	switch v := reflect.ValueOf(s); v.Kind() {
	case reflect.Pointer, reflect.Func, reflect.Map, reflect.Slice, reflect.Chan, reflect.Interface:
		if v.IsNil() {
			return nil
		}
	}
	return s
}

// WithSigner returns a Fetcher that signs with s (nil: unsigned) and
// shares everything else, the scheme memory included, with f: for
// fetching as another actor than Config.Signer's.
func (f *Fetcher) WithSigner(s RequestSigner) *Fetcher {
	g := *f
	g.cfg.Signer = nilSigner(s)
	return &g
}
