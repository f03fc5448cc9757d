package client

// SKELETON: the public API is fixed; the guard is being built (issue 2).

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"time"
)

// Resolver looks up the addresses of a host. A *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// SignFunc signs an outgoing request; the client calls it before the first
// request and again before every redirect hop, with that hop's URL.
type SignFunc func(*http.Request) error

// Config configures a Client. A nil *Config means defaults.
type Config struct {
	// AllowPrivate admits these otherwise refused networks. Defaults to none.
	AllowPrivate []netip.Prefix
	// AllowOnion permits .onion hosts. Defaults to false.
	AllowOnion bool
	// Resolver resolves host names. Defaults to net.DefaultResolver.
	Resolver Resolver
	// MaxBodyBytes caps response bodies. Defaults to MaxBodyBytesDefault.
	MaxBodyBytes int64
	// Timeout bounds a whole request including reading the body. Defaults to TimeoutDefault.
	Timeout time.Duration
	// UserAgent is sent on every request. Defaults to UserAgentDefault.
	UserAgent string
	// Logger receives debug logs. Defaults to discarding.
	Logger *slog.Logger
}

const (
	MaxBodyBytesDefault = 1 << 20
	TimeoutDefault      = 30 * time.Second
	UserAgentDefault    = "fedkit (+https://github.com/fedkit/fedkit)"
)

// DoOpts are per-request options for DoWith.
type DoOpts struct {
	// Sign signs the request and each redirect hop.
	Sign SignFunc
	// Stream returns the body uncapped for the caller to stream.
	Stream bool
}

// Client is the guarded HTTP client.
type Client struct {
	hc  *http.Client
	cfg Config
}

// New builds a Client.
func New(cfg *Config) (*Client, error) {
	c := &Client{hc: &http.Client{}}
	if cfg != nil {
		c.cfg = *cfg
	}
	return c, nil
}

// Do sends req through the guard.
func (c *Client) Do(req *http.Request) (*http.Response, error) { return c.DoWith(req, nil) }

// DoWith sends req with per-request options.
func (c *Client) DoWith(req *http.Request, opts *DoOpts) (*http.Response, error) {
	if opts != nil && opts.Sign != nil {
		if err := opts.Sign(req); err != nil {
			return nil, err
		}
	}
	return c.hc.Do(req)
}

// ValidateURL checks rawURL against the guard's rules without sending anything.
func ValidateURL(rawURL string) error { return nil }
