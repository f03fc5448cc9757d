package directory

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/internal/clock"
	"github.com/fedkit/fedkit/sig"
)

// Defaults for Config.
const (
	// MaxAttemptsDefault is also the most attempts any call makes.
	MaxAttemptsDefault  = 3
	MaxRetryWaitDefault = 30 * time.Second
	BackoffDefault      = 250 * time.Millisecond
	// MaxParticipatingInstances bounds v3 telemetry.
	MaxParticipatingInstances = 10_000_000
	// SignatureLabel is the RFC 9421 label of every lifecycle signature.
	SignatureLabel = "directory"
	// SignatureLifetime is expires - created.
	SignatureLifetime = 300 * time.Second
)

// SignedComponents are the covered components of every lifecycle POST, in order.
var signedComponents = []string{"@method", "@authority", "@target-uri", "content-digest", "content-type", "date"}

// Doer sends one HTTP request. *client.Client satisfies it.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// TelemetryFunc reports the relay's participating (connected) instance
// count for v3. An error or a value outside 0..MaxParticipatingInstances
// means "unknown" and the telemetry object is left out.
type TelemetryFunc func(ctx context.Context) (int64, error)

// Config configures a Client. Actor and PublicBaseURL are required.
type Config struct {
	// Actor is the relay actor URL sent as relay_actor, e.g.
	// "https://relay.example/actor". Required.
	Actor string
	// PublicBaseURL is the relay's origin, e.g. "https://relay.example".
	// Required; Actor must lie under it.
	PublicBaseURL string
	// KeyID is the signing key's ID. Defaults to Actor + "#main-key".
	KeyID string
	// Directories are the configured entries. Lifecycle calls are refused
	// for other origins, and register, heartbeat and sync for disabled
	// ones. Defaults to none.
	Directories []Entry
	// Profile is sent on v2 and v3 register; it is normalised strictly by
	// New. Defaults to the empty profile (explicit empty values).
	Profile Profile
	// Telemetry supplies v3 participating_instance_count. Defaults to nil:
	// unknown, omitted.
	Telemetry TelemetryFunc
	// HTTP sends requests. Defaults to a *client.Client built from
	// ClientConfig(). Whatever it is, redirects, content coding, oversize
	// bodies and wrong media types are still refused here.
	HTTP Doer
	// Timeout bounds each request; values above TimeoutDefault are capped.
	// Defaults to TimeoutDefault (15 s).
	Timeout time.Duration
	// MaxAttempts bounds attempts for retryable failures; values above
	// MaxAttemptsDefault are capped to it, the seed's "at most three
	// attempts". Defaults to MaxAttemptsDefault (3).
	MaxAttempts int
	// MaxRetryWait is the longest remote Retry-After waited out in-process;
	// a longer one returns at once with RetryAt set. Defaults to
	// MaxRetryWaitDefault (30 s).
	MaxRetryWait time.Duration
	// Backoff is the first local retry delay, doubled per attempt. Defaults
	// to BackoffDefault (250 ms).
	Backoff time.Duration
	// Now is the clock for created, Date and Retry-After dates. Defaults
	// to the clock of the Scheduler, Unregister or RunManual it is first
	// handed to with one, else time.Now (the clock rule: set it once, on
	// the outermost component).
	Now func() time.Time
	// Nonce returns a fresh signature nonce. Defaults to 24 random bytes,
	// base64url without padding.
	Nonce func() (string, error)
	// Logger receives debug logs. Defaults to discarding.
	Logger *slog.Logger
	// TracerProvider receives a span per lifecycle call and per request
	// (package doc, "Telemetry"). Defaults to OTel's global provider, a
	// no-op until the application installs one.
	TracerProvider trace.TracerProvider
	// MeterProvider receives the http.client.request.duration histogram
	// of the Client's requests. Defaults to OTel's global provider.
	MeterProvider metric.MeterProvider
}

// Client speaks the Directory lifecycle protocol v1-v3 for one relay
// identity. It is safe for concurrent use.
type Client struct {
	key      crypto.Signer
	cfg      Config
	clock    *clock.Source
	tracer   trace.Tracer
	duration metric.Float64Histogram

	mu      sync.Mutex
	dirs    []Entry
	profile Profile // normalised; replaced by SetProfile
	digest  string
}

// New builds a Client signing with key, the relay actor's RSA key (at
// least 2048 bits). It validates the identity (canonical base URL, actor
// under it, keyid = actor#fragment), the entries and the profile, and
// sends nothing.
func New(key crypto.Signer, cfg *Config) (*Client, error) {
	c := &Client{key: key}
	if cfg != nil {
		c.cfg = *cfg
	}
	if err := c.withDefaults(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Client) withDefaults() error {
	cfg := &c.cfg
	if c.key == nil {
		return fmt.Errorf("%w: no signing key", ErrConfig)
	}
	pub, ok := c.key.Public().(*rsa.PublicKey)
	if !ok {
		return fmt.Errorf("%w: the Directory profile signs with an RSA key", ErrConfig)
	}
	if pub.N.BitLen() < sig.MinRSABits {
		return fmt.Errorf("%w: RSA key below %d bits", ErrConfig, sig.MinRSABits)
	}
	if err := checkActor(cfg.Actor, cfg.PublicBaseURL); err != nil {
		return err
	}
	if cfg.KeyID == "" {
		cfg.KeyID = cfg.Actor + "#main-key"
	}
	if err := checkKeyID(cfg.KeyID, cfg.Actor); err != nil {
		return err
	}
	if err := c.SetDirectories(cfg.Directories); err != nil {
		return err
	}
	if err := c.SetProfile(cfg.Profile); err != nil {
		return err
	}
	if cfg.Timeout <= 0 || cfg.Timeout > TimeoutDefault {
		cfg.Timeout = TimeoutDefault
	}
	if cfg.MaxAttempts <= 0 || cfg.MaxAttempts > MaxAttemptsDefault {
		cfg.MaxAttempts = MaxAttemptsDefault
	}
	if cfg.MaxRetryWait == 0 {
		cfg.MaxRetryWait = MaxRetryWaitDefault
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = BackoffDefault
	}
	c.clock = clock.New(cfg.Now)
	cfg.Now = c.clock.Now
	if cfg.Nonce == nil {
		cfg.Nonce = randomNonce
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c.instrument()
	if cfg.HTTP == nil {
		hc, err := client.New(ClientConfig())
		if err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
		cfg.HTTP = hc
	}
	return nil
}

// checkKeyID refuses an empty or padded keyid and one that is not
// actor#fragment with a non-empty unreserved fragment of at most 128 bytes.
func checkKeyID(keyID, actor string) error {
	if _, err := sig.ParseKeyID(keyID); err != nil {
		return fmt.Errorf("%w: key ID: %w", ErrConfig, err)
	}
	frag, ok := strings.CutPrefix(keyID, actor+"#")
	if !ok || frag == "" || len(frag) > 128 {
		return fmt.Errorf("%w: key ID must be the relay actor with a fragment", ErrConfig)
	}
	for i := 0; i < len(frag); i++ {
		if !isUnreserved(frag[i]) {
			return fmt.Errorf("%w: key ID fragment must be unreserved characters", ErrConfig)
		}
	}
	return nil
}

func randomNonce() (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// SetDirectories replaces the configured entries (after a configuration
// reload). Each must be a unique canonical origin; at most MaxDirectories.
func (c *Client) SetDirectories(entries []Entry) error {
	if len(entries) > MaxDirectories {
		return fmt.Errorf("%w: more than %d directories", ErrConfig, MaxDirectories)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if _, err := ParseOrigin(e.Origin); err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
		if seen[e.Origin] {
			return fmt.Errorf("%w: duplicate directory origin", ErrConfig)
		}
		seen[e.Origin] = true
	}
	c.mu.Lock()
	c.dirs = append([]Entry(nil), entries...)
	c.mu.Unlock()
	return nil
}

// Directories returns the configured entries.
func (c *Client) Directories() []Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Entry(nil), c.dirs...)
}

// SetProfile replaces the profile sent on v2/v3 register (after a
// configuration reload), normalising it strictly as New does. The
// Scheduler calls it with the profile of every file it reads, so an edited
// DIRECTORY_PROFILE registers without a restart.
func (c *Client) SetProfile(p Profile) error {
	n, err := p.Normalize()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	d := n.Digest()
	c.mu.Lock()
	c.profile, c.digest = n, d
	c.mu.Unlock()
	return nil
}

// Profile returns the normalised profile sent on v2/v3 register.
func (c *Client) Profile() Profile {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.profile
}

// ProfileDigest returns the hex SHA-256 of the normalised profile.
func (c *Client) ProfileDigest() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.digest
}

// currentProfile is the profile and digest one request body carries, read
// together so a concurrent SetProfile cannot split them.
func (c *Client) currentProfile() (Profile, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.profile, c.digest
}

// entry checks that origin is configured and, unless anyState, enabled.
func (c *Client) entry(origin string, anyState bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.dirs {
		if e.Origin == origin {
			if !e.Enabled && !anyState {
				return ErrDisabled
			}
			return nil
		}
	}
	return ErrUnknownDirectory
}

// CallOpts are per-call options for Register, Heartbeat, Unregister and Sync.
type CallOpts struct {
	// Version to speak. Zero reads the status document and negotiates.
	Version Version
	// MaxAttempts overrides Config.MaxAttempts, capped at
	// MaxAttemptsDefault; 1 makes a single attempt (a scheduler doing its
	// own backoff).
	MaxAttempts int
	// MaxRetryWait overrides Config.MaxRetryWait; negative never waits
	// out a Retry-After in-process.
	MaxRetryWait time.Duration
}

// Result describes a completed lifecycle call.
type Result struct {
	// Origin is the Directory called.
	Origin string
	// Version is the protocol version spoken, requested or negotiated.
	Version Version
	// Operation, Outcome and StatusCode are those of the final request: a
	// heartbeat after reconciliation.
	Operation  Operation
	Outcome    Outcome
	StatusCode int
	// Reconciled reports that a heartbeat met 409 relay_not_registered and
	// the one permitted register + final heartbeat ran.
	Reconciled bool
	// RegisterOutcome is the register outcome of Sync, Register or a
	// reconciliation, else "".
	RegisterOutcome Outcome
	// ProfileDigest is the digest (Client.ProfileDigest) of the profile the
	// successful register of this call (Register, Sync or a
	// reconciliation) stood for, at any version, for change detection; ""
	// when no register succeeded.
	ProfileDigest string
	// Requests counts signed requests sent.
	Requests int
	// Completed is when the call finished, by Config.Now.
	Completed time.Time
}

// Status retrieves and strictly validates the Directory's public status
// document with an unsigned GET. Errors are *TransportError,
// *InvalidResponseError or *ResponseError (e.g. 503 internal_error).
func (c *Client) Status(ctx context.Context, origin string) (_ *Status, err error) {
	if _, err := ParseOrigin(origin); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, origin+StatusPath, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOrigin, err)
	}
	req.Header.Set("Accept", "application/json")
	ctx, obs := c.startHTTP(ctx, http.MethodGet, req.URL, statusOperation, 1)
	var sc int
	defer func() { obs.end(sc, err) }()
	req = req.WithContext(ctx)
	sc, h, body, err := c.exchange(ctx, req)
	if err != nil {
		return nil, err
	}
	if sc != http.StatusOK {
		return nil, c.statusError(sc, h, body)
	}
	if r := checkFraming(sc, h); r != "" {
		return nil, &InvalidResponseError{StatusCode: sc, Reason: r}
	}
	return ParseStatus(body, origin)
}

// statusError validates a non-200 status response: only a well-formed
// 503 internal_error envelope is an error from the Directory; anything
// else is invalid.
func (c *Client) statusError(sc int, h http.Header, body []byte) error {
	if sc != http.StatusServiceUnavailable {
		if sc >= 300 && sc < 400 {
			return &InvalidResponseError{StatusCode: sc, Reason: ReasonRedirect}
		}
		return &InvalidResponseError{StatusCode: sc, Reason: ReasonStatusCode}
	}
	if r := checkFraming(sc, h); r != "" {
		return &InvalidResponseError{StatusCode: sc, Reason: r}
	}
	f, err := decodeObject(body)
	if err != nil {
		return &InvalidResponseError{StatusCode: sc, Reason: reasonOf(err)}
	}
	code, r := decodeErrorEnvelope(f, V1)
	if r != "" {
		return &InvalidResponseError{StatusCode: sc, Reason: r}
	}
	if code != CodeInternalError {
		return &InvalidResponseError{StatusCode: sc, Reason: ReasonCodeStatus}
	}
	now := c.cfg.Now()
	d, ok := parseRetryAfter(h.Values("Retry-After"), now)
	if !ok {
		return &InvalidResponseError{StatusCode: sc, Reason: ReasonRetryAfter}
	}
	re := &ResponseError{Version: V1, StatusCode: sc, Code: code, RetryAfter: d}
	if d > 0 {
		re.RetryAt = now.Add(d)
	}
	return re
}

// exchange sends req and reads at most MaxResponseBytes+1 of the body,
// mapping every failure to this package's closed errors.
func (c *Client) exchange(ctx context.Context, req *http.Request) (int, http.Header, []byte, error) {
	resp, err := c.cfg.HTTP.Do(req)
	if err != nil {
		return 0, nil, nil, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		if errors.Is(err, client.ErrTooLarge) {
			return 0, nil, nil, &InvalidResponseError{StatusCode: resp.StatusCode, Reason: ReasonTooLarge}
		}
		return 0, nil, nil, c.transportError(ctx, err)
	}
	if len(body) > MaxResponseBytes {
		return 0, nil, nil, &InvalidResponseError{StatusCode: resp.StatusCode, Reason: ReasonTooLarge}
	}
	return resp.StatusCode, resp.Header, body, nil
}

// transportError turns a Doer error into a closed error, dropping its text.
func (c *Client) transportError(ctx context.Context, err error) error {
	var (
		redir *client.RedirectError
		many  *client.TooManyRedirectsError
	)
	switch {
	case errors.As(err, &redir):
		return &InvalidResponseError{StatusCode: redir.StatusCode, Reason: ReasonRedirect}
	case errors.As(err, &many):
		return &InvalidResponseError{StatusCode: many.StatusCode, Reason: ReasonRedirect}
	case errors.Is(err, client.ErrTooLarge):
		return &InvalidResponseError{StatusCode: 200, Reason: ReasonTooLarge}
	}
	c.cfg.Logger.Debug("directory: transport failure", "err", err)
	if errors.Is(err, client.ErrBlocked) {
		return &TransportError{Blocked: true}
	}
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled) {
		return &TransportError{Canceled: true}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, client.ErrTimeout) || ctx.Err() != nil {
		return &TransportError{Timeout: true}
	}
	return &TransportError{}
}

// wireBody is a lifecycle request body; member order is the fixtures'.
type wireBody struct {
	ProtocolVersion int            `json:"protocol_version"`
	Operation       Operation      `json:"operation"`
	RelayActor      string         `json:"relay_actor"`
	PublicBaseURL   string         `json:"public_base_url,omitempty"`
	Profile         *Profile       `json:"profile,omitempty"`
	Telemetry       *wireTelemetry `json:"telemetry,omitempty"`
}

type wireTelemetry struct {
	ParticipatingInstanceCount int64 `json:"participating_instance_count"`
}

// body builds the exact compact JSON for (v, op) and, for a register, the
// digest of the profile it stands for (at every version: the digest is
// change detection for the configured profile, not for the wire bytes).
func (c *Client) body(ctx context.Context, v Version, op Operation) ([]byte, string, error) {
	b := wireBody{ProtocolVersion: int(v), Operation: op, RelayActor: c.cfg.Actor}
	var digest string
	if op == OpRegister {
		b.PublicBaseURL = c.cfg.PublicBaseURL
		var p Profile
		p, digest = c.currentProfile()
		if v >= V2 {
			b.Profile = &p
		}
	}
	if v == V3 && op != OpUnregister && c.cfg.Telemetry != nil {
		if n, err := c.cfg.Telemetry(ctx); err == nil && n >= 0 && n <= MaxParticipatingInstances {
			b.Telemetry = &wireTelemetry{ParticipatingInstanceCount: n}
		} else {
			c.cfg.Logger.Debug("directory: telemetry unknown; omitted")
		}
	}
	out, err := json.Marshal(b)
	return out, digest, err
}

// newRequest builds and signs a fresh lifecycle request: new nonce, new
// created time, new signature. Nothing is ever re-sent.
func (c *Client) newRequest(ctx context.Context, origin string, v Version, op Operation) (*http.Request, string, error) {
	body, digest, err := c.body(ctx, v, op)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrSigning, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, origin+op.Path(v), bytes.NewReader(body))
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrSigning, err)
	}
	nonce, err := c.cfg.Nonce()
	if err != nil || nonce == "" {
		return nil, "", fmt.Errorf("%w: no nonce", ErrSigning)
	}
	created := c.cfg.Now().UTC().Truncate(time.Second)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Digest", sig.ContentDigest(body, sig.DigestSHA256))
	req.Header.Set("Date", created.Format(http.TimeFormat))
	err = sig.SignRFC9421(req, c.key, &sig.SignOpts{
		Label:      SignatureLabel,
		Components: signedComponents,
		KeyID:      c.cfg.KeyID,
		Alg:        sig.AlgRSAv15SHA256,
		Tag:        v.Tag(),
		Nonce:      nonce,
		Created:    created,
		Expires:    created.Add(SignatureLifetime),
	})
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrSigning, err)
	}
	return req, digest, nil
}

// once performs one signed attempt. A successful register reports the
// digest of the profile it sent.
func (c *Client) once(ctx context.Context, origin string, v Version, op Operation, attempt int) (out Outcome, sc int, digest string, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, digest, err := c.newRequest(ctx, origin, v, op)
	if err != nil {
		return "", 0, "", err
	}
	ctx, obs := c.startHTTP(ctx, http.MethodPost, req.URL, string(op), attempt)
	defer func() {
		obs.span.SetAttributes(attrProtocolVersion.Int(int(v)))
		obs.end(sc, err)
	}()
	req = req.WithContext(ctx)
	sc, h, body, err := c.exchange(ctx, req)
	if err != nil {
		return "", 0, "", err
	}
	out, err = decodeLifecycle(v, op, c.cfg.Actor, sc, h, body, c.cfg.Now())
	if err != nil {
		digest = ""
	}
	return out, sc, digest, err
}

// call runs one operation with the retry policy: only retryable classes
// are retried, at most maxAttempts times, waiting max(backoff,
// Retry-After); a wait beyond maxWait returns the error instead.
func (c *Client) call(ctx context.Context, origin string, v Version, op Operation, opts *CallOpts, res *Result) (Outcome, error) {
	attempts, maxWait := c.cfg.MaxAttempts, c.cfg.MaxRetryWait
	if opts != nil && opts.MaxAttempts > 0 {
		attempts = min(opts.MaxAttempts, MaxAttemptsDefault)
	}
	if opts != nil && opts.MaxRetryWait != 0 {
		maxWait = opts.MaxRetryWait
	}
	for n := 1; ; n++ {
		out, sc, digest, err := c.once(ctx, origin, v, op, n)
		if !errors.Is(err, ErrSigning) {
			res.Requests++
		}
		res.Operation, res.StatusCode, res.Completed = op, sc, c.cfg.Now()
		if digest != "" {
			res.ProfileDigest = digest
		}
		if err == nil || ClassOf(err) != ClassRetryable || n >= attempts {
			return out, err
		}
		wait := c.cfg.Backoff << (n - 1)
		if ra := RetryAfterOf(err); ra > wait {
			wait = ra
		}
		if wait > maxWait {
			return "", err // RetryAt already says when
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", &TransportError{Canceled: errors.Is(ctx.Err(), context.Canceled), Timeout: errors.Is(ctx.Err(), context.DeadlineExceeded)}
		case <-t.C:
		}
	}
}

// version resolves the version to speak: the requested one, or the
// negotiated one from a fresh status read. A status failure is returned
// as is; it is never a reason to fall back. A status reporting lifecycle
// off is a *LifecycleOffError: signing a request the Directory can only
// refuse with 503 lifecycle_unavailable is pointless.
func (c *Client) version(ctx context.Context, origin string, opts *CallOpts) (Version, error) {
	if opts != nil && opts.Version != 0 {
		if !opts.Version.Valid() {
			return 0, ErrUnsupportedVersion
		}
		return opts.Version, nil
	}
	st, err := c.Status(ctx, origin)
	if err != nil {
		return 0, err
	}
	if err := lifecycleOff(st); err != nil {
		return 0, err
	}
	return st.Negotiate(), nil
}

func (c *Client) lifecycle(ctx context.Context, origin string, op Operation, anyState bool, opts *CallOpts) (*Result, Version, error) {
	if err := c.entry(origin, anyState); err != nil {
		return nil, 0, err
	}
	v, err := c.version(ctx, origin, opts)
	if err != nil {
		return nil, 0, err
	}
	return &Result{Origin: origin, Version: v}, v, nil
}

// Register registers the relay (v2/v3 with the profile, v3 with
// telemetry). The entry must be enabled.
func (c *Client) Register(ctx context.Context, origin string, opts *CallOpts) (res *Result, err error) {
	ctx, span := c.startCall(ctx, spanRegister, string(OpRegister), origin)
	defer func() { endCall(span, res, err) }()
	return c.register(ctx, origin, opts)
}

func (c *Client) register(ctx context.Context, origin string, opts *CallOpts) (*Result, error) {
	res, v, err := c.lifecycle(ctx, origin, OpRegister, false, opts)
	if err != nil {
		return nil, err
	}
	out, err := c.call(ctx, origin, v, OpRegister, opts, res)
	if err != nil {
		return res, err
	}
	res.Outcome, res.RegisterOutcome = out, out
	return res, nil
}

// Heartbeat sends a liveness update (identity-only on v1/v2, with
// telemetry on v3). Only a validated 409 relay_not_registered leads to
// exactly one register and one final heartbeat, each a single attempt;
// every other failure is returned without registering.
func (c *Client) Heartbeat(ctx context.Context, origin string, opts *CallOpts) (res *Result, err error) {
	ctx, span := c.startCall(ctx, spanHeartbeat, string(OpHeartbeat), origin)
	defer func() { endCall(span, res, err) }()
	return c.heartbeat(ctx, origin, opts)
}

func (c *Client) heartbeat(ctx context.Context, origin string, opts *CallOpts) (*Result, error) {
	res, v, err := c.lifecycle(ctx, origin, OpHeartbeat, false, opts)
	if err != nil {
		return nil, err
	}
	out, err := c.call(ctx, origin, v, OpHeartbeat, opts, res)
	if ClassOf(err) != ClassReconcile {
		res.Outcome = out
		return res, err
	}
	single := &CallOpts{MaxAttempts: 1, MaxRetryWait: -1}
	res.Reconciled = true
	reg, err := c.call(ctx, origin, v, OpRegister, single, res)
	if err != nil {
		return res, err
	}
	res.RegisterOutcome = reg
	out, err = c.call(ctx, origin, v, OpHeartbeat, single, res)
	res.Outcome = out
	return res, err
}

// Unregister removes the registration. It is allowed for disabled entries:
// the operator disables an entry before unregistering it.
func (c *Client) Unregister(ctx context.Context, origin string, opts *CallOpts) (res *Result, err error) {
	ctx, span := c.startCall(ctx, spanUnregister, string(OpUnregister), origin)
	defer func() { endCall(span, res, err) }()
	return c.unregister(ctx, origin, opts)
}

func (c *Client) unregister(ctx context.Context, origin string, opts *CallOpts) (*Result, error) {
	res, v, err := c.lifecycle(ctx, origin, OpUnregister, true, opts)
	if err != nil {
		return nil, err
	}
	out, err := c.call(ctx, origin, v, OpUnregister, opts, res)
	res.Outcome = out
	return res, err
}

// Sync performs an explicit registration/profile reconciliation: it always
// reads the status document, negotiates the highest advertised version
// (opts.Version, if set, must be advertised) and registers under it.
func (c *Client) Sync(ctx context.Context, origin string, opts *CallOpts) (res *Result, err error) {
	ctx, span := c.startCall(ctx, spanSync, "sync", origin)
	defer func() { endCall(span, res, err) }()
	return c.sync(ctx, origin, opts)
}

func (c *Client) sync(ctx context.Context, origin string, opts *CallOpts) (*Result, error) {
	if err := c.entry(origin, false); err != nil {
		return nil, err
	}
	st, err := c.Status(ctx, origin)
	if err != nil {
		return nil, err
	}
	if err := lifecycleOff(st); err != nil {
		return nil, err
	}
	v := st.Negotiate()
	if opts != nil && opts.Version != 0 {
		if !opts.Version.Valid() || !st.Advertises(opts.Version) {
			return nil, ErrUnsupportedVersion
		}
		v = opts.Version
	}
	o := CallOpts{Version: v}
	if opts != nil {
		o.MaxAttempts, o.MaxRetryWait = opts.MaxAttempts, opts.MaxRetryWait
	}
	return c.Register(ctx, origin, &o)
}
