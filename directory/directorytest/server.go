package directorytest

import (
	"bytes"
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/dunglas/httpsfv"
	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/sig"
)

// Defaults for Config.
const (
	OriginDefault          = "https://directory.example"
	SchemaDefault          = 4
	MaxRequestBytesDefault = 65536
	SoftwareVersionDefault = "1.3.0-test"
	// SourceRateBurstDefault and SourceRateRefillDefault are the real
	// server's per-source, per-operation token bucket, spent before any
	// other work.
	SourceRateBurstDefault  = 60
	SourceRateRefillDefault = time.Second
	// ActorRateBurstDefault and ActorRateRefillDefault are its
	// per-actor, per-operation bucket, spent after authentication.
	ActorRateBurstDefault  = 10
	ActorRateRefillDefault = time.Minute
	replayWindow           = 10 * time.Minute
)

// ContentSecurityPolicy is the deny-by-default policy on every response,
// as the Directory's common HTTP wrapper sends it: scripts, images, fonts,
// connections, frames, objects, media, forms and base-URI changes denied
// (docs/PUBLIC-LISTING.md; only its HTML page relaxes it, for a stylesheet).
const ContentSecurityPolicy = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Config configures a fake Directory. A nil *Config means defaults.
type Config struct {
	// Origin is the Directory's public origin; signatures are verified
	// against its authority. Defaults to OriginDefault. StartTLS replaces it.
	Origin string
	// Schema is the status schema served: 2, 3 or 4. Defaults to
	// SchemaDefault (4).
	Schema int
	// Versions is schema 4's lifecycle_protocol_versions; the lifecycle
	// routes of unlisted versions answer 404 text/plain, as a pre-1.3
	// server does. Defaults to [1 2 3] for schema 4 and [1] otherwise.
	Versions []directory.Version
	// EnrollmentOpen admits first registrations. Defaults to false, as the
	// real server's durable policy does.
	EnrollmentOpen bool
	// Keys maps key IDs to public keys, standing in for actor resolution.
	// Defaults to none: signed requests are refused until AddKey adds their
	// key.
	Keys map[string]crypto.PublicKey
	// Now is the server clock. Defaults to time.Now.
	Now func() time.Time
	// MaxRequestBytes is DIRECTORY_MAX_REQUEST_BODY_BYTES. Defaults to
	// MaxRequestBytesDefault.
	MaxRequestBytes int
	// SourceRateBurst is the per-source (client IP), per-operation token
	// bucket size. Defaults to SourceRateBurstDefault.
	SourceRateBurst int
	// SourceRateRefill is the time to refill one source token. Defaults to
	// SourceRateRefillDefault.
	SourceRateRefill time.Duration
	// ActorRateBurst is the per-actor, per-operation token bucket size.
	// Defaults to ActorRateBurstDefault.
	ActorRateBurst int
	// ActorRateRefill is the time to refill one actor token. Defaults to
	// ActorRateRefillDefault.
	ActorRateRefill time.Duration
	// DisableRateLimits switches both buckets off, for tests that send
	// more than a real Directory would admit. Defaults to false.
	DisableRateLimits bool
	// PublicListing is DIRECTORY_PUBLIC_LISTING_ENABLED, reported by
	// schemas 3 and 4 as public_listing_enabled and _available. Defaults
	// to false, as on the real server.
	PublicListing bool
	// SoftwareVersion is the status "version". Defaults to SoftwareVersionDefault.
	SoftwareVersion string
}

// Registration is what the fake stores for a registered relay.
type Registration struct {
	// Actor and PublicBaseURL are as the relay registered them.
	Actor         string
	PublicBaseURL string
	// Version is the protocol of the last register.
	Version directory.Version
	// Profile is the last registered profile, nil after a v1 register.
	Profile *directory.Profile
	// Telemetry is the last participating_instance_count, or -1 if never sent.
	Telemetry int64
	// Heartbeats counts recorded heartbeats.
	Heartbeats int
	// Active is false after unregister or Forget, until the next register.
	Active bool
}

// Request is one lifecycle request as the fake saw it.
type Request struct {
	// Version and Operation are those of the route.
	Version   directory.Version
	Operation directory.Operation
	// Header and Body are as received.
	Header http.Header
	Body   []byte
	// Nonce is the signature's nonce, "" when the request was refused
	// before its signature was read.
	Nonce string
	// StatusCode and Code are the fake's answer ("" for success).
	StatusCode int
	Code       directory.ErrorCode
}

// Reply is a canned answer served instead of the normal outcome, after the
// request has passed validation, authentication and replay reservation. A
// zero StatusCode lets that request be answered normally.
type Reply struct {
	// StatusCode and Code are the error to answer with.
	StatusCode int
	Code       directory.ErrorCode
	// RetryAfter is the Retry-After header value, "" for none.
	RetryAfter string
}

// Server is a fake Directory. Its methods are safe for concurrent use.
type Server struct {
	mu        sync.Mutex
	cfg       Config
	regs      map[string]*Registration
	suspended map[string]bool
	replay    map[[32]byte]time.Time
	buckets   map[string]*bucket
	log       []Request
	statusLog int
	replies   []Reply
	lifecycle bool
	statusErr bool
}

type bucket struct {
	tokens float64
	last   time.Time
}

// New returns a fake Directory.
func New(cfg *Config) *Server {
	s := &Server{regs: map[string]*Registration{}, suspended: map[string]bool{},
		replay: map[[32]byte]time.Time{}, buckets: map[string]*bucket{}, lifecycle: true}
	if cfg != nil {
		s.cfg = *cfg
	}
	c := &s.cfg
	if c.Origin == "" {
		c.Origin = OriginDefault
	}
	if c.Schema == 0 {
		c.Schema = SchemaDefault
	}
	if c.Versions == nil {
		c.Versions = []directory.Version{directory.V1}
		if c.Schema >= 4 {
			c.Versions = []directory.Version{directory.V1, directory.V2, directory.V3}
		}
	}
	keys := map[string]crypto.PublicKey{}
	for k, v := range c.Keys {
		keys[k] = v
	}
	c.Keys = keys
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxRequestBytes == 0 {
		c.MaxRequestBytes = MaxRequestBytesDefault
	}
	if c.SourceRateBurst <= 0 {
		c.SourceRateBurst = SourceRateBurstDefault
	}
	if c.SourceRateRefill <= 0 {
		c.SourceRateRefill = SourceRateRefillDefault
	}
	if c.ActorRateBurst <= 0 {
		c.ActorRateBurst = ActorRateBurstDefault
	}
	if c.ActorRateRefill <= 0 {
		c.ActorRateRefill = ActorRateRefillDefault
	}
	if c.SoftwareVersion == "" {
		c.SoftwareVersion = SoftwareVersionDefault
	}
	return s
}

// Origin returns the Directory's public origin.
func (s *Server) Origin() string { s.mu.Lock(); defer s.mu.Unlock(); return s.cfg.Origin }

// AddKey makes a key resolvable.
func (s *Server) AddKey(keyID string, pub crypto.PublicKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Keys[keyID] = pub
}

// SetEnrollment opens or closes first registration.
func (s *Server) SetEnrollment(open bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.EnrollmentOpen = open
}

// Suspend blocks (or unblocks) an actor's register and heartbeat.
func (s *Server) Suspend(actor string, suspended bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.suspended[actor] = suspended
}

// SetLifecycleAvailable switches the lifecycle service on or off, as
// DIRECTORY_LIFECYCLE_ENABLED does: off, the status document reports
// lifecycle_enabled and lifecycle_available false and every lifecycle POST
// answers 503 lifecycle_unavailable before any verification (the real
// server never builds its verifier then).
func (s *Server) SetLifecycleAvailable(ok bool) { s.mu.Lock(); defer s.mu.Unlock(); s.lifecycle = ok }

// SetStatusFailing makes GET /v1/status answer 503 internal_error.
func (s *Server) SetStatusFailing(fail bool) { s.mu.Lock(); defer s.mu.Unlock(); s.statusErr = fail }

// SetVersions changes the advertised and routed versions (schema 4).
func (s *Server) SetVersions(vs ...directory.Version) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Versions = slices.Clone(vs)
}

// Enqueue queues canned replies, served one per lifecycle request after
// authentication and replay reservation.
func (s *Server) Enqueue(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, r...)
}

// Forget removes an actor's registration row entirely (as pruning would),
// so its next heartbeat gets 409 relay_not_registered.
func (s *Server) Forget(actor string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.regs[actor]; r != nil {
		r.Active = false
	}
}

// Registration returns a copy of the stored registration of actor.
func (s *Server) Registration(actor string) (Registration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.regs[actor]
	if !ok {
		return Registration{}, false
	}
	return *r, true
}

// Requests returns the lifecycle requests seen so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// StatusReads counts GET/HEAD /v1/status requests.
func (s *Server) StatusReads() int { s.mu.Lock(); defer s.mu.Unlock(); return s.statusLog }

// Doer returns a directory.Doer that serves requests in-process, without
// sockets, so it works inside testing/synctest bubbles.
func (s *Server) Doer() directory.Doer { return doerFunc(s.do) }

type doerFunc func(*http.Request) (*http.Response, error)

func (f doerFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

func (s *Server) do(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	in := req.Clone(req.Context())
	in.RequestURI = req.URL.RequestURI()
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		in.Body = io.NopCloser(bytes.NewReader(b))
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, in)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// ServeHTTP implements the Directory's routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.URL.Path == directory.StatusPath {
		s.status(w, r)
		return
	}
	v, op, ok := s.route(r)
	if !ok {
		writePlain(w, http.StatusNotFound, "404 page not found\n")
		return
	}
	rec := Request{Version: v, Operation: op, Header: r.Header.Clone()}
	sc, code, retry, out := s.lifecycleReq(r, v, op, &rec)
	rec.StatusCode, rec.Code = sc, code
	s.log = append(s.log, rec)
	if code != "" {
		writeError(w, v, sc, code, retry)
		return
	}
	writeJSON(w, sc, successBody{ProtocolVersion: int(v), Operation: op, Outcome: out, RelayActor: s.actorOf(rec.Body)})
}

// successBody and errorBody keep the fixtures' member order.
type successBody struct {
	ProtocolVersion int                 `json:"protocol_version"`
	Operation       directory.Operation `json:"operation"`
	Outcome         directory.Outcome   `json:"outcome"`
	RelayActor      string              `json:"relay_actor"`
}

type errorBody struct {
	ProtocolVersion int `json:"protocol_version"`
	Error           struct {
		Code    directory.ErrorCode `json:"code"`
		Message string              `json:"message"`
	} `json:"error"`
}

func (s *Server) actorOf(body []byte) string {
	var b struct {
		RelayActor string `json:"relay_actor"`
	}
	json.Unmarshal(body, &b)
	return b.RelayActor
}

// route maps the exact target to (version, operation); unrouted versions
// are 404, as on a server that predates them.
func (s *Server) route(r *http.Request) (directory.Version, directory.Operation, bool) {
	for _, v := range s.cfg.Versions {
		for _, op := range []directory.Operation{directory.OpRegister, directory.OpHeartbeat, directory.OpUnregister} {
			if r.URL.Path == op.Path(v) {
				return v, op, true
			}
		}
	}
	return 0, "", false
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	s.statusLog++
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		// The router's own answer, not the JSON writer's: text/plain and
		// no Cache-Control.
		w.Header().Set("Allow", "GET, HEAD")
		writePlain(w, http.StatusMethodNotAllowed, "Method Not Allowed\n")
		return
	}
	if s.statusErr {
		writeError(w, 1, http.StatusServiceUnavailable, directory.CodeInternalError, "")
		return
	}
	doc := map[string]any{
		"schema_version":      s.cfg.Schema,
		"service":             directory.StatusService,
		"version":             s.cfg.SoftwareVersion,
		"public_base_url":     s.cfg.Origin,
		"lifecycle_enabled":   s.lifecycle,
		"lifecycle_available": s.lifecycle,
		"enrollment_open":     s.cfg.EnrollmentOpen,
	}
	if s.cfg.Schema >= 3 {
		doc["public_listing_enabled"] = s.cfg.PublicListing
		doc["public_listing_available"] = s.cfg.PublicListing
	}
	if s.cfg.Schema >= 4 {
		doc["lifecycle_protocol_versions"] = s.cfg.Versions
	}
	writeJSON(w, http.StatusOK, doc)
}

type failure struct {
	sc    int
	code  directory.ErrorCode
	retry string
}

func fail(sc int, code directory.ErrorCode) *failure { return &failure{sc: sc, code: code} }

// lifecycleReq applies the server's check order (docs/HANDLERS.md and
// spec 8.4): method; lifecycle switched on; source token; body; target,
// version, operation and identity; Host, Content-Type, digest and
// signature; replay; actor token; then state.
func (s *Server) lifecycleReq(r *http.Request, v directory.Version, op directory.Operation, rec *Request) (int, directory.ErrorCode, string, directory.Outcome) {
	out, f := s.lifecycleCheck(r, v, op, rec)
	if f != nil {
		return f.sc, f.code, f.retry, ""
	}
	sc := http.StatusOK
	if out == directory.OutcomeCreated {
		sc = http.StatusCreated
	}
	return sc, "", "", out
}

func (s *Server) lifecycleCheck(r *http.Request, v directory.Version, op directory.Operation, rec *Request) (directory.Outcome, *failure) {
	if r.Method != http.MethodPost {
		return "", fail(http.StatusMethodNotAllowed, directory.CodeInvalidRequest)
	}
	if !s.lifecycle {
		return "", fail(http.StatusServiceUnavailable, directory.CodeLifecycleUnavailable)
	}
	now := s.cfg.Now()
	if wait, ok := s.take("source "+sourceOf(r)+" "+string(op), s.cfg.SourceRateBurst, s.cfg.SourceRateRefill, now); !ok {
		return "", &failure{sc: http.StatusTooManyRequests, code: directory.CodeRateLimited, retry: strconv.Itoa(wait)}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(s.cfg.MaxRequestBytes)+1))
	if err != nil {
		return "", fail(http.StatusBadRequest, directory.CodeInvalidRequest)
	}
	if len(body) > s.cfg.MaxRequestBytes {
		return "", fail(http.StatusRequestEntityTooLarge, directory.CodeInvalidRequest)
	}
	rec.Body = body
	// Both the escaped path and the raw request target must be exactly the
	// route (absolute-form targets are judged by their path).
	raw := r.RequestURI
	if strings.HasPrefix(raw, "https://") || strings.HasPrefix(raw, "http://") {
		raw = r.URL.RequestURI()
	}
	if (raw != "" && raw != op.Path(v)) || r.URL.EscapedPath() != op.Path(v) {
		return "", fail(http.StatusBadRequest, directory.CodeInvalidRequest)
	}
	if r.URL.RawQuery != "" || r.URL.ForceQuery || r.URL.Fragment != "" {
		return "", fail(http.StatusBadRequest, directory.CodeInvalidRequest)
	}
	// The body is decoded before Content-Type is looked at: a wrong media
	// type is an authentication failure of the signed content-type
	// component, not a malformed request.
	b, f := s.checkBody(body, v, op)
	if f != nil {
		return "", f
	}
	nonce, f := s.checkSignature(r, body, v, b.actor)
	rec.Nonce = nonce
	if f != nil {
		return "", f
	}
	key := sha256.Sum256([]byte(b.keyID + "\x00" + nonce))
	if exp, seen := s.replay[key]; seen && now.Before(exp) {
		return "", fail(http.StatusConflict, directory.CodeReplayDetected)
	}
	s.replay[key] = now.Add(replayWindow)
	if wait, ok := s.take("actor "+b.actor+" "+string(op), s.cfg.ActorRateBurst, s.cfg.ActorRateRefill, now); !ok {
		return "", &failure{sc: http.StatusTooManyRequests, code: directory.CodeRateLimited, retry: strconv.Itoa(wait)}
	}
	if len(s.replies) > 0 {
		rp := s.replies[0]
		s.replies = s.replies[1:]
		if rp.StatusCode != 0 {
			return "", &failure{sc: rp.StatusCode, code: rp.Code, retry: rp.RetryAfter}
		}
	}
	return s.apply(v, op, b)
}

// sourceOf is the request's source address: the direct peer (the fake
// trusts no proxy), "" in-process.
func sourceOf(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// take consumes one token of bucket k (burst tokens, one more every
// refill); when empty it returns the whole seconds until the next token,
// at least 1.
func (s *Server) take(k string, burst int, refill time.Duration, now time.Time) (int, bool) {
	if s.cfg.DisableRateLimits {
		return 0, true
	}
	bk := s.buckets[k]
	if bk == nil {
		bk = &bucket{tokens: float64(burst), last: now}
		s.buckets[k] = bk
	}
	bk.tokens = min(float64(burst), bk.tokens+float64(now.Sub(bk.last))/float64(refill))
	bk.last = now
	if bk.tokens >= 1 {
		bk.tokens--
		return 0, true
	}
	need := time.Duration((1 - bk.tokens) * float64(refill))
	return max(int((need+time.Second-1)/time.Second), 1), false
}

func (s *Server) apply(v directory.Version, op directory.Operation, b *body) (directory.Outcome, *failure) {
	reg := s.regs[b.actor]
	switch op {
	case directory.OpRegister:
		if s.suspended[b.actor] {
			return "", fail(http.StatusForbidden, directory.CodeRelaySuspended)
		}
		if reg == nil {
			if !s.cfg.EnrollmentOpen {
				return "", fail(http.StatusForbidden, directory.CodeEnrollmentClosed)
			}
			s.regs[b.actor] = &Registration{Actor: b.actor, PublicBaseURL: b.base, Version: v,
				Profile: b.profile, Telemetry: b.telemetry, Active: true}
			return directory.OutcomeCreated, nil
		}
		changed := !reg.Active || reg.PublicBaseURL != b.base || !sameProfile(reg.Profile, b.profile) ||
			(b.telemetry >= 0 && b.telemetry != reg.Telemetry)
		reg.Active, reg.PublicBaseURL, reg.Version = true, b.base, v
		if b.profile != nil {
			reg.Profile = b.profile
		}
		if b.telemetry >= 0 {
			reg.Telemetry = b.telemetry
		}
		if changed {
			return directory.OutcomeUpdated, nil
		}
		return directory.OutcomeUnchanged, nil
	case directory.OpHeartbeat:
		// The active registration is looked up before suspension: a
		// suspended relay that is not registered gets 409, and only the
		// register that follows meets 403 relay_suspended.
		if reg == nil || !reg.Active {
			return "", fail(http.StatusConflict, directory.CodeRelayNotRegistered)
		}
		if s.suspended[b.actor] {
			return "", fail(http.StatusForbidden, directory.CodeRelaySuspended)
		}
		reg.Heartbeats++
		if b.telemetry >= 0 {
			reg.Telemetry = b.telemetry
		}
		return directory.OutcomeRecorded, nil
	default:
		if reg == nil || !reg.Active {
			return directory.OutcomeAbsent, nil
		}
		reg.Active = false
		return directory.OutcomeRemoved, nil
	}
}

func sameProfile(a, b *directory.Profile) bool {
	if b == nil {
		return true // v1 register leaves the stored profile alone
	}
	if a == nil {
		return false
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// body is a validated request body.
type body struct {
	actor, base, keyID string
	profile            *directory.Profile
	telemetry          int64 // -1 when absent
}

func (s *Server) checkBody(raw []byte, v directory.Version, op directory.Operation) (*body, *failure) {
	bad := fail(http.StatusBadRequest, directory.CodeInvalidRequest)
	val, err := parseStrict(raw)
	if err != nil {
		return nil, bad
	}
	m, ok := val.(map[string]any)
	if !ok {
		return nil, bad
	}
	allowed := map[string]bool{"protocol_version": true, "operation": true, "relay_actor": true}
	if op == directory.OpRegister {
		allowed["public_base_url"] = true
		if v >= directory.V2 {
			allowed["profile"] = true
		}
	}
	if (v == directory.V3 && op != directory.OpUnregister) || (v == directory.V2 && op != directory.OpUnregister) {
		allowed["telemetry"] = true
	}
	for k := range m {
		if !allowed[k] {
			return nil, bad
		}
	}
	// The version is judged first; a missing one decodes as 0, which no
	// route speaks (so `{}` is unsupported_protocol_version).
	pv := json.Number("0")
	if raw, present := m["protocol_version"]; present {
		n, ok := raw.(json.Number)
		if _, err := strconv.Atoi(n.String()); !ok || err != nil {
			return nil, bad
		}
		pv = n
	}
	if pv.String() != strconv.Itoa(int(v)) {
		return nil, fail(http.StatusBadRequest, directory.CodeUnsupportedProtocolVersion)
	}
	if o, _ := m["operation"].(string); o != string(op) {
		return nil, bad
	}
	b := &body{telemetry: -1}
	b.actor, _ = m["relay_actor"].(string)
	if b.actor == "" {
		return nil, bad
	}
	if op == directory.OpRegister {
		b.base, _ = m["public_base_url"].(string)
		if _, err := directory.ParseOrigin(b.base); err != nil || !strings.HasPrefix(b.actor, b.base+"/") {
			return nil, bad
		}
	} else {
		origin, _, found := strings.Cut(strings.TrimPrefix(b.actor, "https://"), "/")
		if !found {
			return nil, bad
		}
		b.base = "https://" + origin
	}
	if !canonicalActor(b.actor, b.base) {
		return nil, bad
	}
	if allowed["profile"] {
		pm, ok := m["profile"].(map[string]any)
		if !ok {
			return nil, bad
		}
		p, ok := checkProfile(pm)
		if !ok {
			return nil, bad
		}
		b.profile = p
	}
	if t, present := m["telemetry"]; present {
		tm, ok := t.(map[string]any)
		if !ok || len(tm) != 1 {
			return nil, bad
		}
		key := "participating_instance_count"
		if v == directory.V2 {
			key = "receiving_instance_count" // the 1.3 server's rc3 compatibility path
		}
		n, ok := tm[key].(json.Number)
		if !ok {
			return nil, bad
		}
		c, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil || c < 0 || c > directory.MaxParticipatingInstances {
			return nil, bad
		}
		b.telemetry = c
	}
	return b, nil
}

// canonicalActor applies the Directory's identity rules by checking that
// the relay's own canonical form is what was sent.
func canonicalActor(actor, base string) bool {
	if _, err := directory.ParseOrigin(base); err != nil {
		return false
	}
	p := strings.TrimPrefix(actor, base)
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "?#\\ ") {
		return false
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	for _, r := range p {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return false
		}
	}
	up := strings.ToUpper(p)
	return !strings.Contains(up, "%2F") && !strings.Contains(up, "%25")
}

var profileKeys = directory.ProfileFields()

func checkProfile(m map[string]any) (*directory.Profile, bool) {
	if len(m) != len(profileKeys) {
		return nil, false
	}
	str := func(k string, max int) (string, bool) {
		s, ok := m[k].(string)
		s = strings.TrimSpace(s)
		return s, ok && len(s) <= max && !hasControl(s)
	}
	list := func(k string) ([]string, bool) {
		a, ok := m[k].([]any)
		if !ok || len(a) > 16 {
			return nil, false
		}
		out := []string{}
		for _, it := range a {
			s, ok := it.(string)
			s = strings.TrimSpace(s)
			if !ok || s == "" || len(s) > 128 || hasControl(s) {
				return nil, false
			}
			out = append(out, s)
		}
		slices.Sort(out)
		return slices.Compact(out), true
	}
	var p directory.Profile
	var oks [12]bool
	p.ParticipationMode, oks[0] = str("participation_mode", 256)
	p.Availability, oks[1] = str("availability", 256)
	p.RelayType, oks[2] = str("relay_type", 256)
	p.Languages, oks[3] = list("languages")
	p.Countries, oks[4] = list("countries")
	p.Regions, oks[5] = list("regions")
	p.Topics, oks[6] = list("topics")
	p.ContactFediverse, oks[7] = str("contact_fediverse", 256)
	p.ContactEmail, oks[8] = str("contact_email", 320)
	p.ContactURL, oks[9] = str("contact_url", 2048)
	p.ParticipationURL, oks[10] = str("participation_url", 2048)
	p.Notes, oks[11] = str("notes", 1024)
	for _, ok := range oks {
		if !ok {
			return nil, false
		}
	}
	switch p.ParticipationMode {
	case "", "open", "restricted", "closed":
	default:
		return nil, false
	}
	if p.ContactEmail != "" {
		if a, err := mail.ParseAddress(p.ContactEmail); err != nil || a.Name != "" || a.Address != p.ContactEmail {
			return nil, false
		}
	}
	for _, u := range []string{p.ContactURL, p.ParticipationURL} {
		if u != "" && !strings.HasPrefix(u, "https://") {
			return nil, false
		}
	}
	if j, _ := json.Marshal(p); len(j) > 4096 {
		return nil, false
	}
	return &p, true
}

func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

var requiredComponents = []string{"@method", "@authority", "@target-uri", "content-digest", "content-type", "date"}

// checkSignature verifies the RFC 9421 profile: one signature, the six
// components without parameters, exactly the six parameters, the route's
// tag, keyid bound to the relay actor, time window, Content-Digest, and the
// signature over a base rebuilt from the configured authority.
func (s *Server) checkSignature(r *http.Request, raw []byte, v directory.Version, actor string) (string, *failure) {
	unauth := fail(http.StatusUnauthorized, directory.CodeAuthenticationFailed)
	// The Host must be the Directory's public authority, which @authority
	// is verified against, and the signed content-type exactly
	// application/json.
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	if !strings.EqualFold(host, directory.Authority(s.cfg.Origin)) {
		return "", unauth
	}
	if ct := r.Header.Values("Content-Type"); len(ct) != 1 || ct[0] != "application/json" {
		return "", unauth
	}
	if len(r.Header.Values("Digest")) > 0 && len(r.Header.Values("Content-Digest")) == 0 {
		return "", unauth
	}
	if err := sig.VerifyContentDigest(r.Header.Values("Content-Digest"), raw); err != nil {
		return "", unauth
	}
	dv, err := sig.ParseContentDigest(r.Header.Values("Content-Digest"))
	if err != nil || !slices.ContainsFunc(dv, func(d sig.DigestValue) bool { return d.Alg == sig.DigestSHA256 }) {
		return "", unauth
	}
	in, err := httpsfv.UnmarshalDictionary(r.Header.Values("Signature-Input"))
	if err != nil || len(in.Names()) != 1 {
		return "", unauth
	}
	sg, err := httpsfv.UnmarshalDictionary(r.Header.Values("Signature"))
	if err != nil || len(sg.Names()) != 1 || sg.Names()[0] != in.Names()[0] || len(in.Names()[0]) > 64 {
		return "", unauth
	}
	m, _ := in.Get(in.Names()[0])
	il, ok := m.(httpsfv.InnerList)
	if !ok {
		return "", unauth
	}
	var comps []string
	for _, it := range il.Items {
		name, ok := it.Value.(string)
		if !ok || len(it.Params.Names()) != 0 || slices.Contains(comps, name) {
			return "", unauth
		}
		comps = append(comps, name)
	}
	for _, want := range requiredComponents {
		if !slices.Contains(comps, want) {
			return "", unauth
		}
	}
	pn := il.Params.Names()
	if len(pn) != 6 {
		return "", unauth
	}
	for _, n := range pn {
		if !slices.Contains([]string{"keyid", "alg", "tag", "nonce", "created", "expires"}, n) {
			return "", unauth
		}
	}
	if sv, _ := sg.Get(sg.Names()[0]); sv == nil {
		return "", unauth
	} else if item, ok := sv.(httpsfv.Item); !ok || len(item.Params.Names()) != 0 {
		return "", unauth
	}
	sigs, err := sig.ParseRFC9421Signatures(r.Header)
	if err != nil || len(sigs) != 1 {
		return "", unauth
	}
	sv := sigs[0]
	nonce := sv.Nonce
	if sv.Alg != sig.AlgRSAv15SHA256 || sv.Tag != v.Tag() || nonce == "" || len(nonce) > 256 {
		return nonce, unauth
	}
	if frag, ok := strings.CutPrefix(sv.KeyID, actor+"#"); !ok || frag == "" || len(sv.KeyID) > 2048 {
		return nonce, unauth
	}
	now := s.cfg.Now()
	inWindow := func(t time.Time) bool {
		return !t.Before(now.Add(-5*time.Minute)) && !t.After(now.Add(30*time.Second))
	}
	date, err := http.ParseTime(r.Header.Get("Date"))
	if len(r.Header.Values("Date")) != 1 || err != nil || !inWindow(date) || sv.Created.IsZero() || !inWindow(sv.Created) {
		return nonce, unauth
	}
	if !sv.Expires.After(sv.Created) || !sv.Expires.After(now) || sv.Expires.Sub(sv.Created) > 300*time.Second {
		return nonce, unauth
	}
	pub, ok := s.cfg.Keys[sv.KeyID]
	if !ok {
		return nonce, unauth
	}
	// The server rebuilds @authority and @target-uri from its configured
	// public origin, not from what the client claims.
	vr := r.Clone(r.Context())
	vr.Host = strings.TrimPrefix(s.cfg.Origin, "https://")
	vr.URL.Scheme, vr.URL.Host = "https", vr.Host
	if err := sig.VerifyRFC9421(vr, sv, pub, sig.AlgRSAv15SHA256); err != nil {
		return nonce, unauth
	}
	return nonce, nil
}

// securityHeaders are the common wrapper's, on every response.
func securityHeaders(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
}

func writeJSON(w http.ResponseWriter, sc int, v any) {
	b, _ := json.Marshal(v)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	securityHeaders(h)
	w.WriteHeader(sc)
	w.Write(append(b, '\n'))
}

// writePlain is the router's own answer (404, 405 on /v1/status):
// text/plain, no Cache-Control.
func writePlain(w http.ResponseWriter, sc int, text string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	securityHeaders(h)
	w.WriteHeader(sc)
	io.WriteString(w, text)
}

// messages are fixed server texts in the real server's style (the three
// with fixtures are exact); the client checks their length and discards
// them.
var messages = map[directory.ErrorCode]string{
	directory.CodeInvalidRequest:             "request is invalid",
	directory.CodeUnsupportedProtocolVersion: "protocol version is not supported",
	directory.CodeAuthenticationFailed:       "request authentication failed",
	directory.CodeRelaySuspended:             "relay is suspended",
	directory.CodeEnrollmentClosed:           "directory enrollment is closed",
	directory.CodeReplayDetected:             "request nonce was already used",
	directory.CodeRelayNotRegistered:         "relay is not registered",
	directory.CodeRateLimited:                "too many requests",
	directory.CodeInternalError:              "internal server error",
	directory.CodeLifecycleUnavailable:       "lifecycle service is unavailable",
}

// Message is the fixed message the fake sends with code, for tests that
// check a client ignores it.
func Message(code directory.ErrorCode) string {
	if m, ok := messages[code]; ok {
		return m
	}
	return "request failed"
}

func writeError(w http.ResponseWriter, v directory.Version, sc int, code directory.ErrorCode, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	if sc == http.StatusMethodNotAllowed && w.Header().Get("Allow") == "" {
		w.Header().Set("Allow", "POST")
	}
	var e errorBody
	e.ProtocolVersion, e.Error.Code, e.Error.Message = int(v), code, Message(code)
	writeJSON(w, sc, e)
}

// VerifyBase checks a fixture-style signing vector's signature by building
// the base by hand (spec 11.3), independently of the sig package's base
// construction. It returns nil when the vector verifies.
func VerifyBase(method, authority, target, contentDigest, contentType, date, signatureInput, signature string, pub crypto.PublicKey) error {
	params, ok := strings.CutPrefix(signatureInput, "directory=")
	if !ok {
		return fmt.Errorf("directorytest: Signature-Input is not labelled directory")
	}
	b64, ok := strings.CutPrefix(signature, "directory=:")
	if !ok || !strings.HasSuffix(b64, ":") {
		return fmt.Errorf("directorytest: Signature is not labelled directory")
	}
	sigBytes, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(b64, ":"))
	if err != nil {
		return err
	}
	base := `"@method": ` + method + "\n" +
		`"@authority": ` + authority + "\n" +
		`"@target-uri": https://` + authority + target + "\n" +
		`"content-digest": ` + contentDigest + "\n" +
		`"content-type": ` + contentType + "\n" +
		`"date": ` + date + "\n" +
		`"@signature-params": ` + params
	return verifyRSA(pub, []byte(base), sigBytes)
}
