package config

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/directory"
)

// Defaults.
const (
	PublicURLDefault   = "http://localhost:8080"
	ListenDefault      = "127.0.0.1:8080"
	ServiceNameDefault = "fedkit relay"
	DataDirDefault     = "data"
	RedisPrefixDefault = "fedkit-relay:"
	// ActorKeyFileName is the key's file name inside DATA_DIR when ACTOR_KEY
	// is not set.
	ActorKeyFileName = "actor.pem"
	// MaxJobConcurrency bounds JOB_CONCURRENCY.
	MaxJobConcurrency = 1024
	// MaxRateLimit bounds RATE_LIMIT_PER_MINUTE and RATE_LIMIT_BURST.
	MaxRateLimit = 1_000_000
)

// Environment variables that override the file, so secrets need not live in it.
const (
	EnvPostgresURL = "POSTGRES_URL"
	EnvRedisURL    = "REDIS_URL"
	EnvAdminToken  = "ADMIN_TOKEN"
)

// ErrInvalid is wrapped by every configuration error.
var ErrInvalid = errors.New("config: invalid")

// Config is the relay configuration.
type Config struct {
	// PUBLIC_URL is the relay's public origin; the actor is PUBLIC_URL/actor.
	// Defaults to PublicURLDefault.
	PublicURL string `yaml:"PUBLIC_URL"`
	// LISTEN is the HTTP listen address. Defaults to ListenDefault.
	Listen string `yaml:"LISTEN"`
	// SERVICE_NAME and SUMMARY describe the relay actor.
	ServiceName string `yaml:"SERVICE_NAME"`
	Summary     string `yaml:"SUMMARY"`
	// DATA_DIR holds the embedded subscriber store and, by default, the
	// actor key; relative to the configuration file. Defaults to DataDirDefault.
	DataDir string `yaml:"DATA_DIR"`
	// ACTOR_KEY is the actor's RSA key (PEM), generated on first start when
	// missing. Relative to the configuration file. Defaults to DATA_DIR/actor.pem.
	ActorKey string `yaml:"ACTOR_KEY"`
	// POSTGRES_URL, when set, selects the durable queue and Postgres-backed
	// subscribers. Overridden by the environment variable of the same name.
	PostgresURL string `yaml:"POSTGRES_URL"`
	// REDIS_URL, when set, shares circuit breakers and the Directory
	// scheduler's state: one node, or a Redis Cluster named by several
	// addr parameters (see RedisClient). Overridden by the environment
	// variable.
	RedisURL string `yaml:"REDIS_URL"`
	// REDIS_PREFIX begins every Redis key. Defaults to RedisPrefixDefault.
	RedisPrefix string `yaml:"REDIS_PREFIX"`
	// ADMIN_TOKEN guards the status page; empty means a random token is
	// made at start and logged. Overridden by the environment variable.
	AdminToken string `yaml:"ADMIN_TOKEN"`
	// METRICS_LISTEN, when set, serves Prometheus metrics at /metrics on
	// this address without the admin token (bind it to an address only the
	// scraper reaches); workers serve it too. Empty: /metrics is on LISTEN,
	// behind ADMIN_TOKEN, in server processes.
	MetricsListen string `yaml:"METRICS_LISTEN"`
	// MANUAL_APPROVAL keeps new subscriptions pending until approved on the
	// status page. Defaults to false.
	ManualApproval bool `yaml:"MANUAL_APPROVAL"`
	// BLOCKED_DOMAINS are refused, with their subdomains. ALLOWED_DOMAINS,
	// when not empty, are the only domains admitted (with subdomains).
	BlockedDomains []string `yaml:"BLOCKED_DOMAINS"`
	AllowedDomains []string `yaml:"ALLOWED_DOMAINS"`
	// JOB_CONCURRENCY is how many deliveries a process sends at once.
	// Defaults to the deliverer's default (16).
	JobConcurrency int `yaml:"JOB_CONCURRENCY"`
	// RATE_LIMIT_PER_MINUTE is how many activities a minute one server may
	// send the inbox (sustained); beyond it the inbox answers 429 with a
	// Retry-After. RATE_LIMIT_BURST is how many it may send at once.
	// Defaults to the relay's defaults (600 a minute, bursts of 120).
	// RATE_LIMIT_DISABLED turns the limit off. Each process counts alone.
	RateLimitPerMinute int  `yaml:"RATE_LIMIT_PER_MINUTE"`
	RateLimitBurst     int  `yaml:"RATE_LIMIT_BURST"`
	RateLimitDisabled  bool `yaml:"RATE_LIMIT_DISABLED"`

	// The Directory keys, validated by package directory (see Directory).
	Directories               any `yaml:"DIRECTORIES"`
	DirectorySchedulerEnabled any `yaml:"DIRECTORY_SCHEDULER_ENABLED"`
	DirectoryProfile          any `yaml:"DIRECTORY_PROFILE"`

	// Path is the configuration file's absolute path, "" for defaults only.
	Path string `yaml:"-"`
	// Directory is the validated Directory configuration.
	Directory *directory.Settings `yaml:"-"`
	// Warnings are operator warnings about optional values treated as unset.
	Warnings []string `yaml:"-"`
	// Notes are hints that are not problems (a key that will be generated).
	Notes []string `yaml:"-"`
}

// LoadOpts are options for Load.
type LoadOpts struct {
	// Strict makes warnings an error (relay -t --strict).
	Strict bool
}

// Load reads and validates the file at path. lookupEnv (os.LookupEnv)
// supplies overrides; nil means none.
func Load(path string, lookupEnv func(string) (string, bool), opts *LoadOpts) (*Config, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(data, abs, lookupEnv, opts)
}

// Parse validates data as if read from path (which anchors relative paths).
func Parse(data []byte, path string, lookupEnv func(string) (string, bool), opts *LoadOpts) (*Config, error) {
	if opts == nil {
		opts = &LoadOpts{}
	}
	c := &Config{Path: path}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := unmarshal(data, c); err != nil {
			return nil, err
		}
	}
	if lookupEnv != nil {
		for name, dst := range map[string]*string{EnvPostgresURL: &c.PostgresURL, EnvRedisURL: &c.RedisURL, EnvAdminToken: &c.AdminToken} {
			if v, ok := lookupEnv(name); ok && v != "" {
				*dst = v
			}
		}
	}
	settings, warns, err := directory.ParseConfig(data, &directory.LoadOpts{})
	return c.finish(settings, warns, err, opts)
}

// finish takes the Directory settings package directory parsed, fills in
// defaults and validates; the file and the environment end the same way.
func (c *Config) finish(settings *directory.Settings, warns []directory.Warning, err error, opts *LoadOpts) (*Config, error) {
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	c.Directory = settings
	for _, w := range warns {
		c.Warnings = append(c.Warnings, w.String())
	}
	if err := c.defaultsAndValidate(); err != nil {
		return nil, err
	}
	if opts.Strict && len(c.Warnings) > 0 {
		return c, fmt.Errorf("%w: %d warning(s) in strict mode: %w", ErrInvalid, len(c.Warnings), directory.ErrStrictWarnings)
	}
	return c, nil
}

func (c *Config) defaultsAndValidate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if c.PublicURL == "" {
		c.PublicURL = PublicURLDefault
	}
	if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		bad("PUBLIC_URL", "must be an origin such as https://relay.example (no path, query or credentials)")
	} else {
		c.PublicURL = u.Scheme + "://" + strings.ToLower(u.Host)
		if u.Scheme == "http" {
			c.Notes = append(c.Notes, "PUBLIC_URL is plain http: fine on this machine, but other servers need https (put the relay behind a TLS proxy)")
		}
	}
	if c.Listen == "" {
		c.Listen = ListenDefault
	}
	if _, port, err := net.SplitHostPort(c.Listen); err != nil {
		bad("LISTEN", "must be host:port, such as 127.0.0.1:8080")
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		bad("LISTEN", "port must be 0..65535")
	}
	if c.MetricsListen != "" {
		if _, port, err := net.SplitHostPort(c.MetricsListen); err != nil {
			bad("METRICS_LISTEN", "must be host:port, such as 127.0.0.1:9464")
		} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			bad("METRICS_LISTEN", "port must be 0..65535")
		} else if c.MetricsListen == c.Listen && port != "0" {
			bad("METRICS_LISTEN", "must differ from LISTEN (leave it empty to serve /metrics there, behind ADMIN_TOKEN)")
		}
	}
	if c.ServiceName == "" {
		c.ServiceName = ServiceNameDefault
	}
	if c.DataDir == "" {
		c.DataDir = DataDirDefault
	}
	c.DataDir = c.resolve(c.DataDir)
	if c.ActorKey == "" {
		c.ActorKey = filepath.Join(c.DataDir, ActorKeyFileName)
	} else {
		c.ActorKey = c.resolve(c.ActorKey)
	}
	if fi, err := os.Stat(c.ActorKey); err != nil {
		c.Notes = append(c.Notes, "ACTOR_KEY "+c.ActorKey+" does not exist yet: the server generates it on first start")
	} else if !fi.Mode().IsRegular() {
		bad("ACTOR_KEY", "%s is not a regular file", c.ActorKey)
	}
	if c.PostgresURL != "" {
		if _, err := pgxpool.ParseConfig(c.PostgresURL); err != nil {
			bad("POSTGRES_URL", "cannot be parsed as a Postgres connection string")
		}
	}
	if c.RedisURL != "" {
		if err := checkRedisURL(c.RedisURL); err != nil {
			bad("REDIS_URL", "cannot be parsed as a redis:// or rediss:// URL")
		}
	}
	if c.RedisPrefix == "" {
		c.RedisPrefix = RedisPrefixDefault
	}
	if c.JobConcurrency < 0 || c.JobConcurrency > MaxJobConcurrency {
		bad("JOB_CONCURRENCY", "must be 0 (default) to %d", MaxJobConcurrency)
	}
	if c.RateLimitPerMinute < 0 || c.RateLimitPerMinute > MaxRateLimit {
		bad("RATE_LIMIT_PER_MINUTE", "must be 0 (default) to %d", MaxRateLimit)
	}
	if c.RateLimitBurst < 0 || c.RateLimitBurst > MaxRateLimit {
		bad("RATE_LIMIT_BURST", "must be 0 (default) to %d", MaxRateLimit)
	}
	var err error
	if c.BlockedDomains, err = normalizeDomains(c.BlockedDomains); err != nil {
		bad("BLOCKED_DOMAINS", "%v", err)
	}
	if c.AllowedDomains, err = normalizeDomains(c.AllowedDomains); err != nil {
		bad("ALLOWED_DOMAINS", "%v", err)
	}
	if c.AdminToken != "" && len(c.AdminToken) < 16 {
		bad("ADMIN_TOKEN", "must be at least 16 characters (or empty for a random one per start)")
	}
	for _, e := range c.Directory.Directories {
		if e.Enabled && !strings.HasPrefix(c.PublicURL, "https://") {
			bad("DIRECTORIES", "entry %s is enabled but PUBLIC_URL is not https", e.Origin)
		}
	}
	if c.Directory.SchedulerEnabled && c.RedisURL == "" {
		c.Notes = append(c.Notes, "DIRECTORY_SCHEDULER_ENABLED without REDIS_URL: scheduler state lives in the server's memory, so run one server process only")
	}
	if c.Directory.SchedulerEnabled && c.Path == "" {
		bad("DIRECTORY_SCHEDULER_ENABLED", "needs a configuration file")
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}
	return nil
}

func (c *Config) resolve(p string) string {
	if filepath.IsAbs(p) || c.Path == "" {
		return p
	}
	return filepath.Join(filepath.Dir(c.Path), p)
}

// ActorURL is the relay actor's id.
func (c *Config) ActorURL() string { return c.PublicURL + "/actor" }

// KeyID is the actor key's id.
func (c *Config) KeyID() string { return c.ActorURL() + "#main-key" }

// Host is PUBLIC_URL's host (with port, if any).
func (c *Config) Host() string {
	return strings.TrimPrefix(strings.TrimPrefix(c.PublicURL, "https://"), "http://")
}

func normalizeDomains(in []string) ([]string, error) {
	out := make([]string, 0, len(in))
	for _, d := range in {
		d = strings.ToLower(strings.TrimSpace(d))
		d = strings.TrimPrefix(d, "*.")
		d = strings.Trim(d, ".")
		if d == "" || strings.ContainsAny(d, "/:@ \t*?#") {
			return nil, fmt.Errorf("%q is not a domain name", d)
		}
		out = append(out, d)
	}
	return out, nil
}

// FromEnv builds an environment-only configuration: each relay key is read
// from the environment variable of the same name, the Directory keys through
// directory.LoadEnv (which refuses to enable the scheduler from the
// environment). Relative paths are relative to the working directory.
func FromEnv(lookupEnv func(string) (string, bool), opts *LoadOpts) (*Config, error) {
	if opts == nil {
		opts = &LoadOpts{}
	}
	get := func(k string) string { v, _ := lookupEnv(k); return v }
	c := &Config{
		PublicURL: get("PUBLIC_URL"), Listen: get("LISTEN"), ServiceName: get("SERVICE_NAME"), Summary: get("SUMMARY"),
		DataDir: get("DATA_DIR"), ActorKey: get("ACTOR_KEY"), PostgresURL: get(EnvPostgresURL), RedisURL: get(EnvRedisURL),
		RedisPrefix: get("REDIS_PREFIX"), AdminToken: get(EnvAdminToken), MetricsListen: get("METRICS_LISTEN"),
	}
	var errs []error
	for name, dst := range map[string]*bool{"MANUAL_APPROVAL": &c.ManualApproval, "RATE_LIMIT_DISABLED": &c.RateLimitDisabled} {
		if v := get(name); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: must be true or false", name))
			}
			*dst = b
		}
	}
	for name, dst := range map[string]*int{"JOB_CONCURRENCY": &c.JobConcurrency,
		"RATE_LIMIT_PER_MINUTE": &c.RateLimitPerMinute, "RATE_LIMIT_BURST": &c.RateLimitBurst} {
		if v := get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: must be a number", name))
			}
			*dst = n
		}
	}
	c.BlockedDomains = splitList(get("BLOCKED_DOMAINS"))
	c.AllowedDomains = splitList(get("ALLOWED_DOMAINS"))
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}
	settings, warns, err := directory.LoadEnv(lookupEnv, &directory.LoadOpts{})
	return c.finish(settings, warns, err, opts)
}

func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}

// unmarshal decodes the file strictly. go-yaml v1.19.2 panics on some
// inputs (a tag on a sequence field, "BLOCKED_DOMAINS: !0000000", found by
// FuzzParse); that is a file it cannot read, reported as ErrInvalid.
func unmarshal(data []byte, c *Config) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: the YAML decoder failed on this file", ErrInvalid)
		}
	}()
	if err := yaml.UnmarshalWithOptions(data, c, yaml.DisallowUnknownField()); err != nil {
		return fmt.Errorf("%w: %s", ErrInvalid, yaml.FormatError(err, false, true))
	}
	return nil
}
