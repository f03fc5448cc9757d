package relay

import (
	"context"
	"crypto"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/examples/relay/internal/store"
	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/inbox"
)

// Public is the ActivityStreams Public collection.
const Public = "https://www.w3.org/ns/activitystreams#Public"

// Defaults.
const (
	// MaxInboxBytesDefault bounds an inbox POST body.
	MaxInboxBytesDefault = 1 << 20
	// Version is reported in NodeInfo.
	Version = "0.1.0"
	// SoftwareName is reported in NodeInfo.
	SoftwareName = "fedkit-relay"
	// TagRelay and TagAccept are the delivery batch tags.
	TagRelay  = "relay"
	TagAccept = "accept"
)

// Sender queues an activity for delivery; *deliver.Deliverer is one.
type Sender interface {
	SendBatch(ctx context.Context, keyID string, activity []byte, inboxes []string, b deliver.Batch) error
}

// Config configures a Relay.
type Config struct {
	// PublicURL is the relay's origin, "https://relay.example". Required.
	PublicURL string
	// Name and Summary describe the actor.
	Name, Summary string
	// Key is the actor's RSA key. Required.
	Key crypto.Signer
	// Store keeps subscribers. Required.
	Store store.Store
	// Sender queues deliveries. Required.
	Sender Sender
	// Lookup fetches actors and keys (a *fetch.Fetcher). Required.
	Lookup fetch.Lookuper
	// Keys resolves signature keys. Defaults to a fetch.KeyResolver over
	// Lookup.
	Keys *fetch.KeyResolver
	// ManualApproval keeps new subscriptions pending.
	ManualApproval bool
	// Blocked and Allowed are domain lists (subdomains included); a
	// non-empty Allowed admits only those.
	Blocked, Allowed []string
	// AdminToken guards /admin. Empty disables the admin pages.
	AdminToken string
	// Health keeps per-host delivery health. Defaults to a new Health.
	Health *Health
	// Status adds queue and Directory sections to the status page.
	Status StatusSource
	// Breakers is the deliverer's breaker store, read for the status page's
	// breaker section. Defaults to nil: no such section.
	Breakers BreakerLights
	// BreakerStore names Breakers' backend on the status page ("memory",
	// "redis"). Defaults to "".
	BreakerStore string
	// Availability is the deliverer's availability store: its unavailable
	// hosts are on the status page, and every server whose signed activity
	// arrives is seen alive in it. Defaults to nil: neither.
	Availability Availability
	// Seen remembers the activities and objects the relay relayed, so
	// that one id is relayed at most once within SeenWindow and an
	// Announce of an object the relay relayed is not relayed again: the
	// guard against loops between relays. Give every process of a
	// deployment the same one (redisseen.Store, pgstore.Seen). Defaults to
	// a MemorySeen of this process.
	Seen SeenSet
	// SeenWindow is how long Seen remembers. Defaults to SeenWindowDefault.
	SeenWindow time.Duration
	// RatePerMinute is how many activities a minute one server (every
	// actor of one host) may send the inbox, sustained; beyond it the inbox
	// answers 429 with a Retry-After. Defaults to RatePerMinuteDefault.
	RatePerMinute int
	// RateBurst is how many it may send at once. Defaults to
	// RateBurstDefault.
	RateBurst int
	// DisableRateLimit turns the per-server limit off.
	DisableRateLimit bool
	// MaxInboxBytes bounds an inbox body. Defaults to MaxInboxBytesDefault.
	MaxInboxBytes int64
	// Now is the clock (signature windows, timestamps). Defaults to time.Now.
	Now func() time.Time
	// Logger. Defaults to discarding.
	Logger *slog.Logger
	// Metrics, when set, is served at GET /metrics behind AdminToken (a
	// Prometheus handler). Defaults to nil: no /metrics route, as when the
	// metrics have a listener of their own.
	Metrics http.Handler
	// TracerProvider and MeterProvider receive the inbox's signature
	// verifications (package sig's sig.verify spans and
	// fedkit.sig.verifications). Default to OpenTelemetry's globals.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
}

// errBlocked is a key resolution refused by the domain lists.
var errBlocked = errors.New("relay: domain not allowed")

// Relay is the relay's HTTP side and its fan-out.
type Relay struct {
	cfg    Config
	base   *url.URL
	actor  string
	keyID  string
	pubPEM string
	inbox  *inbox.Handler
	// nonced is the inbox for signatures that carry an RFC 9421 nonce: it
	// refuses a nonce seen before. Mastodon signs without one, and a
	// verifier with a NonceStore requires one, so it is used only when a
	// nonce is sent.
	nonced *inbox.Handler
	// limit is nil under DisableRateLimit.
	limit *limiter
	log   *slog.Logger
}

// New returns a Relay.
func New(cfg *Config) (*Relay, error) {
	c := *cfg
	if c.PublicURL == "" || c.Key == nil || c.Store == nil || c.Sender == nil || c.Lookup == nil {
		return nil, errors.New("relay: PublicURL, Key, Store, Sender and Lookup are required")
	}
	base, err := url.Parse(c.PublicURL)
	if err != nil || base.Host == "" {
		return nil, fmt.Errorf("relay: PublicURL: %q is not an origin", c.PublicURL)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Keys == nil {
		if c.Keys, err = fetch.NewKeyResolver(c.Lookup, &fetch.KeyResolverConfig{Now: c.Now}); err != nil {
			return nil, fmt.Errorf("relay: %w", err)
		}
	}
	if c.Health == nil {
		c.Health = NewHealth(0)
	}
	if c.Seen == nil {
		c.Seen = NewMemorySeen(&MemorySeenConfig{Now: c.Now})
	}
	if c.SeenWindow <= 0 {
		c.SeenWindow = SeenWindowDefault
	}
	if c.RatePerMinute <= 0 {
		c.RatePerMinute = RatePerMinuteDefault
	}
	if c.RateBurst <= 0 {
		c.RateBurst = RateBurstDefault
	}
	if c.MaxInboxBytes <= 0 {
		c.MaxInboxBytes = MaxInboxBytesDefault
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	pem, err := sig.MarshalPublicKeyPEM(c.Key.Public())
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	r := &Relay{cfg: c, base: base, actor: c.PublicURL + "/actor", log: c.Logger, pubPEM: string(pem)}
	r.keyID = r.actor + "#main-key"
	if !c.DisableRateLimit {
		r.limit = newLimiter(c.RatePerMinute, c.RateBurst, limiterMaxHosts, c.Now)
	}
	// Behind a TLS proxy the request carries no scheme: take PublicURL's.
	// Keys of blocked domains are never fetched: the domain lists apply
	// before any request to the sender's server.
	// Only the HTTP signature of the activity's own actor is taken: the
	// relay sends what it accepts to every subscriber, so an activity
	// another key vouches for (an LD signature, a proof, a refetch) is not
	// relayed. The receive function is never called: serveInbox takes
	// Accept's answer and answers the request itself.
	ic := inbox.Config{
		Verifier: sig.VerifierConfig{Now: c.Now, URLScheme: base.Scheme,
			TracerProvider: c.TracerProvider, MeterProvider: c.MeterProvider},
		MaxBodyBytes:  c.MaxInboxBytes,
		DisableProofs: true,
	}
	keys := allowedKeys{r}
	unused := func(context.Context, *inbox.Activity) error { return nil }
	if r.inbox, err = inbox.New(keys, unused, &ic); err != nil {
		return nil, err
	}
	ic.Verifier.Nonces = sig.NewMemoryNonceStore(&sig.MemoryNonceStoreConfig{Now: c.Now})
	if r.nonced, err = inbox.New(keys, unused, &ic); err != nil {
		return nil, err
	}
	return r, nil
}

// Actor returns the actor's id; KeyID its key's.
func (r *Relay) Actor() string { return r.actor }

// KeyID returns the actor key's id.
func (r *Relay) KeyID() string { return r.keyID }

// Health returns the delivery health tracker.
func (r *Relay) Health() *Health { return r.cfg.Health }

// Handler serves every route.
func (r *Relay) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /actor", r.serveActor)
	mux.HandleFunc("POST /inbox", r.serveInbox)
	mux.HandleFunc("POST /actor/inbox", r.serveInbox)
	mux.HandleFunc("GET /outbox", r.serveEmptyCollection)
	mux.HandleFunc("GET /followers", r.serveEmptyCollection)
	mux.HandleFunc("GET /following", r.serveEmptyCollection)
	mux.HandleFunc("GET /.well-known/webfinger", r.serveWebFinger)
	mux.HandleFunc("GET /.well-known/nodeinfo", r.serveNodeInfoLinks)
	mux.HandleFunc("GET /nodeinfo/2.1", r.serveNodeInfo)
	mux.HandleFunc("GET /admin/status", r.admin(r.serveStatus))
	mux.HandleFunc("GET /admin/status.json", r.admin(r.serveStatusJSON))
	if r.cfg.Metrics != nil {
		mux.HandleFunc("GET /metrics", r.admin(r.cfg.Metrics.ServeHTTP))
	}
	mux.HandleFunc("POST /admin/subscribers/approve", r.admin(r.serveApprove))
	mux.HandleFunc("POST /admin/subscribers/remove", r.admin(r.serveRemove))
	mux.HandleFunc("GET /{$}", r.serveIndex)
	return mux
}

const (
	ctActivity = "application/activity+json"
	ctJRD      = "application/jrd+json"
)

func writeJSON(w http.ResponseWriter, status int, ct string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func (r *Relay) serveActor(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, ctActivity, map[string]any{
		"@context":                  []any{"https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"},
		"id":                        r.actor,
		"type":                      "Application",
		"preferredUsername":         "relay",
		"name":                      r.cfg.Name,
		"summary":                   r.cfg.Summary,
		"url":                       r.actor,
		"inbox":                     r.cfg.PublicURL + "/inbox",
		"outbox":                    r.cfg.PublicURL + "/outbox",
		"followers":                 r.cfg.PublicURL + "/followers",
		"following":                 r.cfg.PublicURL + "/following",
		"endpoints":                 map[string]any{"sharedInbox": r.cfg.PublicURL + "/inbox"},
		"manuallyApprovesFollowers": r.cfg.ManualApproval,
		"publicKey": map[string]any{
			"id":           r.keyID,
			"owner":        r.actor,
			"publicKeyPem": r.pubPEM,
		},
	})
}

func (r *Relay) serveEmptyCollection(w http.ResponseWriter, req *http.Request) {
	writeJSON(w, http.StatusOK, ctActivity, map[string]any{
		"@context":     "https://www.w3.org/ns/activitystreams",
		"id":           r.cfg.PublicURL + req.URL.Path,
		"type":         "OrderedCollection",
		"totalItems":   0,
		"orderedItems": []any{},
	})
}

func (r *Relay) serveWebFinger(w http.ResponseWriter, req *http.Request) {
	res := req.URL.Query().Get("resource")
	host := r.base.Host
	if res != "acct:relay@"+host && res != r.actor && res != "acct:relay@"+r.base.Hostname() {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	writeJSON(w, http.StatusOK, ctJRD, map[string]any{
		"subject": "acct:relay@" + host,
		"aliases": []string{r.actor},
		"links": []any{
			map[string]any{"rel": "self", "type": ctActivity, "href": r.actor},
		},
	})
}

func (r *Relay) serveNodeInfoLinks(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, "application/json", map[string]any{
		"links": []any{map[string]any{
			"rel":  "http://nodeinfo.diaspora.software/ns/schema/2.1",
			"href": r.cfg.PublicURL + "/nodeinfo/2.1",
		}},
	})
}

func (r *Relay) serveNodeInfo(w http.ResponseWriter, req *http.Request) {
	n, err := r.ActiveSubscribers(req.Context())
	if err != nil {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, http.StatusOK, `application/json; profile="http://nodeinfo.diaspora.software/ns/schema/2.1#"`, map[string]any{
		"version":           "2.1",
		"software":          map[string]any{"name": SoftwareName, "version": Version, "repository": "https://github.com/fedkit/fedkit"},
		"protocols":         []string{"activitypub"},
		"services":          map[string]any{"inbound": []string{}, "outbound": []string{}},
		"openRegistrations": !r.cfg.ManualApproval,
		"usage":             map[string]any{"users": map[string]any{"total": 1}},
		"metadata":          map[string]any{"subscribers": n},
	})
}

func (r *Relay) serveIndex(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "%s\n\nThis is an ActivityPub relay.\nMastodon: add %s/inbox as a relay.\nPleroma/Akkoma: follow %s.\n",
		r.cfg.Name, r.cfg.PublicURL, r.actor)
}

// ActiveSubscribers counts the servers with an active subscription: the
// Directory's participating_instance_count. A server is counted once
// however many of its actors follow the relay (an instance actor and a
// user who followed the relay actor, say).
func (r *Relay) ActiveSubscribers(ctx context.Context) (int64, error) {
	subs, err := r.cfg.Store.List(ctx)
	if err != nil {
		return 0, err
	}
	hosts := map[string]bool{}
	for _, s := range subs {
		if s.State == store.StateActive {
			hosts[strings.ToLower(s.Host)] = true
		}
	}
	return int64(len(hosts)), nil
}

func (r *Relay) newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return r.cfg.PublicURL + "/activities/" + hex.EncodeToString(b[:])
}

// hostAllowed applies the block and allow lists to host (no port).
func (r *Relay) hostAllowed(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	in := func(list []string) bool {
		for _, d := range list {
			if host == d || strings.HasSuffix(host, "."+d) {
				return true
			}
		}
		return false
	}
	if in(r.cfg.Blocked) {
		return false
	}
	return len(r.cfg.Allowed) == 0 || in(r.cfg.Allowed)
}
