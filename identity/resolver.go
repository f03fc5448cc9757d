package identity

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/internal/clock"
)

// Resolver resolves atproto identities. The Refresher needs an uncached one
// (*HTTPResolver); Cache wraps one for read paths.
type Resolver interface {
	// LookupDID fetches did's document and verifies its declared handle both
	// ways. A handle that fails verification gives Identity.Handle ==
	// HandleInvalid and a nil error; only a document failure or the
	// context ending is an error.
	LookupDID(ctx context.Context, did DID) (*Identity, error)
	// ResolveHandle resolves h to the DID it claims (one direction only).
	ResolveHandle(ctx context.Context, h Handle) (DID, error)
}

// TXTResolver looks up DNS TXT records. A *net.Resolver satisfies it; tests
// substitute identitytest.DNS so no query leaves the process.
type TXTResolver interface {
	// LookupTXT returns the TXT records of name.
	LookupTXT(ctx context.Context, name string) ([]string, error)
}

// Defaults for ResolverConfig.
const (
	PLCURLDefault            = "https://plc.directory"
	MaxDocumentBytesDefault  = 1 << 20 // Tidepool's cap
	MaxWellKnownBytesDefault = 1 << 10 // Tidepool's cap
	WellKnownTimeoutDefault  = 15 * time.Second
)

const (
	didWebPath              = "/.well-known/did.json"
	atprotoDIDPath          = "/.well-known/atproto-did"
	txtPrefix               = "_atproto."
	txtDIDPrefix            = "did="
	maxTXTRecordsConsidered = 16
	acceptJSON              = "application/did+ld+json, application/json;q=0.9"
	acceptText              = "text/plain"
)

// ResolverConfig configures an HTTPResolver. The zero value is usable.
type ResolverConfig struct {
	// PLCURL is the PLC directory's base URL. Defaults to PLCURLDefault.
	PLCURL string
	// MaxDocumentBytes caps a DID document. Defaults to MaxDocumentBytesDefault.
	MaxDocumentBytes int64
	// MaxWellKnownBytes caps an atproto-did body. Defaults to MaxWellKnownBytesDefault.
	MaxWellKnownBytes int64
	// WellKnownTimeout bounds one handle's well-known fetch, inside the
	// caller's deadline. Defaults to WellKnownTimeoutDefault.
	WellKnownTimeout time.Duration
	// HostURL maps a host to the base URL that serves its https:// paths
	// (did:web documents and atproto-did). It is a test seam: the offline
	// harness points every host at one local listener. Defaults to
	// "https://" + host.
	HostURL func(host string) string
	// Now stamps Identity.ResolvedAt. Defaults to the clock of the Cache
	// or Refresher the resolver is handed to, else time.Now (the project's
	// clock rule: set it once, on the outermost component).
	Now func() time.Time
	// Logger receives debug logs. Defaults to discarding.
	Logger *slog.Logger
}

// HTTPResolver is the uncached Resolver: DID documents from the PLC
// directory or did:web hosts, handles through DNS TXT then well-known, all
// through the guarded client.
type HTTPResolver struct {
	c     *client.Client
	txt   TXTResolver
	cfg   ResolverConfig
	clock *clock.Source
}

var _ Resolver = (*HTTPResolver)(nil)

// NewResolver builds an uncached resolver. txt is required and has no
// default, so that nothing queries system DNS by accident; pass
// net.DefaultResolver in production.
func NewResolver(c *client.Client, txt TXTResolver, cfg *ResolverConfig) (*HTTPResolver, error) {
	if c == nil {
		return nil, errors.New("identity: NewResolver: nil client")
	}
	if txt == nil {
		return nil, errors.New("identity: NewResolver: nil TXT resolver (pass net.DefaultResolver)")
	}
	r := &HTTPResolver{c: c, txt: txt}
	if cfg != nil {
		r.cfg = *cfg
	}
	if r.cfg.PLCURL == "" {
		r.cfg.PLCURL = PLCURLDefault
	}
	r.cfg.PLCURL = strings.TrimRight(r.cfg.PLCURL, "/")
	if u, err := url.Parse(r.cfg.PLCURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("identity: NewResolver: bad PLCURL %q", r.cfg.PLCURL)
	}
	if r.cfg.MaxDocumentBytes <= 0 {
		r.cfg.MaxDocumentBytes = MaxDocumentBytesDefault
	}
	if r.cfg.MaxWellKnownBytes <= 0 {
		r.cfg.MaxWellKnownBytes = MaxWellKnownBytesDefault
	}
	if r.cfg.WellKnownTimeout <= 0 {
		r.cfg.WellKnownTimeout = WellKnownTimeoutDefault
	}
	if r.cfg.HostURL == nil {
		r.cfg.HostURL = func(host string) string { return "https://" + host }
	}
	r.clock = clock.New(r.cfg.Now)
	r.cfg.Now = r.clock.Now
	if r.cfg.Logger == nil {
		r.cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return r, nil
}

// LookupDID implements Resolver.
func (r *HTTPResolver) LookupDID(ctx context.Context, did DID) (*Identity, error) {
	id, err := r.ResolveDID(ctx, did)
	if err != nil {
		return nil, err
	}
	if !id.DeclaredHandle.Resolvable() {
		return id, nil
	}
	got, err := r.ResolveHandle(ctx, id.DeclaredHandle)
	if err != nil {
		// The context ending must surface: the debounce needs to see a
		// deadline, and a cancelled caller must not read "unverified".
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("identity: verifying handle: %w", ctxErr)
		}
		r.cfg.Logger.DebugContext(ctx, "handle did not resolve", "did", did, "err", err)
		return id, nil
	}
	if got == did {
		id.Handle = id.DeclaredHandle
	}
	return id, nil
}

// ResolveDID fetches and parses did's document without verifying the handle.
func (r *HTTPResolver) ResolveDID(ctx context.Context, did DID) (*Identity, error) {
	if _, err := ParseDID(string(did)); err != nil {
		return nil, err
	}
	var u string
	switch did.Method() {
	case "plc":
		u = r.cfg.PLCURL + "/" + string(did)
	case "web":
		u = r.cfg.HostURL(strings.TrimPrefix(string(did), "did:web:")) + didWebPath
	}
	body, status, err := r.get(ctx, u, hostOf(did), acceptJSON, r.cfg.MaxDocumentBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDIDResolutionFailed, err)
	}
	switch {
	case status == http.StatusNotFound || status == http.StatusGone:
		return nil, ErrDIDNotFound
	case status != http.StatusOK:
		return nil, fmt.Errorf("%w: status %d", ErrDIDResolutionFailed, status)
	}
	id, err := ParseDocument(did, body)
	if err != nil {
		return nil, err
	}
	id.ResolvedAt = r.cfg.Now()
	return id, nil
}

func hostOf(did DID) string {
	if did.Method() == "web" {
		return strings.TrimPrefix(string(did), "did:web:")
	}
	return ""
}

// ResolveHandle implements Resolver: DNS TXT at _atproto.<handle> first, then
// https://<handle>/.well-known/atproto-did.
func (r *HTTPResolver) ResolveHandle(ctx context.Context, h Handle) (DID, error) {
	if !h.Resolvable() {
		return "", ErrHandleNotResolvable
	}
	did, dnsErr := r.resolveTXT(ctx, h)
	if dnsErr == nil {
		return did, nil
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	wkCtx, cancel := context.WithTimeout(ctx, r.cfg.WellKnownTimeout)
	defer cancel()
	did, wkErr := r.resolveWellKnown(wkCtx, h)
	if wkErr == nil {
		return did, nil
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	// Not found only when both legs said so authoritatively; a SERVFAIL or
	// a timeout leaves the question open.
	if errors.Is(dnsErr, ErrHandleNotFound) && errors.Is(wkErr, ErrHandleNotFound) {
		return "", ErrHandleNotFound
	}
	// The legs are described, not wrapped: one leg's "not found" must
	// not make the whole lookup match ErrHandleNotFound.
	return "", fmt.Errorf("%w: dns: %v; well-known: %v", ErrHandleResolutionFailed, dnsErr, wkErr)
}

func (r *HTTPResolver) resolveTXT(ctx context.Context, h Handle) (DID, error) {
	recs, err := r.txt.LookupTXT(ctx, txtPrefix+string(h))
	if err != nil {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return "", ErrHandleNotFound
		}
		return "", fmt.Errorf("%w: %w", ErrHandleResolutionFailed, err)
	}
	var found DID
	for i, rec := range recs {
		if i >= maxTXTRecordsConsidered {
			break
		}
		v, ok := strings.CutPrefix(rec, txtDIDPrefix)
		if !ok {
			continue
		}
		did, err := ParseDID(strings.TrimSpace(v))
		if err != nil {
			continue
		}
		if found != "" && found != did {
			return "", fmt.Errorf("%w: TXT records name several DIDs", ErrHandleResolutionFailed)
		}
		found = did
	}
	if found == "" {
		return "", ErrHandleNotFound
	}
	return found, nil
}

func (r *HTTPResolver) resolveWellKnown(ctx context.Context, h Handle) (DID, error) {
	body, status, err := r.get(ctx, r.cfg.HostURL(string(h))+atprotoDIDPath, string(h), acceptText, r.cfg.MaxWellKnownBytes)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrHandleResolutionFailed, err)
	}
	switch {
	case status == http.StatusNotFound:
		return "", ErrHandleNotFound
	case status != http.StatusOK:
		return "", fmt.Errorf("%w: status %d", ErrHandleResolutionFailed, status)
	}
	did, err := ParseDID(strings.TrimSpace(string(body)))
	if err != nil {
		return "", fmt.Errorf("%w: body is not a DID", ErrHandleResolutionFailed)
	}
	return did, nil
}

// get fetches u with a byte cap. host, when set, is sent as the Host header
// so HostURL can reroute without changing the name asked for.
func (r *HTTPResolver) get(ctx context.Context, u, host, accept string, limit int64) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, err
	}
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Accept", accept)
	resp, err := r.c.Do(req)
	if err != nil {
		if errors.Is(err, client.ErrTooLarge) {
			return nil, 0, fmt.Errorf("%w: %w", ErrDocumentTooLarge, err)
		}
		return nil, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, resp.StatusCode, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		if errors.Is(err, client.ErrTooLarge) {
			return nil, 0, fmt.Errorf("%w: %w", ErrDocumentTooLarge, err)
		}
		return nil, 0, err
	}
	if int64(len(body)) > limit {
		return nil, 0, ErrDocumentTooLarge
	}
	return body, resp.StatusCode, nil
}

// adoptClock hands now to x when x is one of this package's components
// and keeps no clock of its own (the clock rule, internal/clock).
func adoptClock(x any, now func() time.Time) {
	switch v := x.(type) {
	case *HTTPResolver:
		if v != nil {
			v.clock.Adopt(now)
		}
	case *Cache:
		if v != nil {
			v.clock.Adopt(now)
			adoptClock(v.inner, now)
		}
	}
}
