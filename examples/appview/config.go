package main

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fedkit/fedkit/examples/appview/internal/ingest"
	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/origin"
)

// Defaults for Config.
const (
	PLCURLDefault          = identity.PLCURLDefault
	ListenDefault          = "127.0.0.1:8080"
	RedriveIntervalDefault = ingest.RedriveIntervalDefault
	LanesDefault           = 8
)

// Config is read from the environment, then overridden by flags.
type Config struct {
	DatabaseURL  string   // DATABASE_URL
	JetstreamURL string   // JETSTREAM_URL: ws(s)://host/subscribe
	TrustedHosts []string // TRUSTED_BRIDGE_PDS_HOSTS, comma-separated
	PLCURL       string   // PLC_URL. Defaults to PLCURLDefault.
	Listen       string   // LISTEN. Defaults to ListenDefault.
	// IndexAllProfiles (INDEX_ALL_PROFILES=true) creates rows for every
	// verified profile, not only bridged ones. Defaults to false.
	IndexAllProfiles bool
	// RedriveInterval (REDRIVE_INTERVAL) must exceed the identity negative
	// TTL, so each redrive reaches the network. Defaults to RedriveIntervalDefault.
	RedriveInterval time.Duration
	// Lanes (LANES) is the number of ordered per-DID lanes. Defaults to LanesDefault.
	Lanes int
}

// loadConfig reads env (through getenv) and then fs's flags from args.
func loadConfig(fs *flag.FlagSet, args []string, getenv func(string) string) (Config, error) {
	c := Config{
		DatabaseURL:     getenv("DATABASE_URL"),
		JetstreamURL:    getenv("JETSTREAM_URL"),
		TrustedHosts:    splitList(getenv("TRUSTED_BRIDGE_PDS_HOSTS")),
		PLCURL:          getenv("PLC_URL"),
		Listen:          getenv("LISTEN"),
		RedriveInterval: RedriveIntervalDefault,
		Lanes:           LanesDefault,
	}
	if v := getenv("INDEX_ALL_PROFILES"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, fmt.Errorf("INDEX_ALL_PROFILES: %w", err)
		}
		c.IndexAllProfiles = b
	}
	if v := getenv("REDRIVE_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return c, fmt.Errorf("REDRIVE_INTERVAL: %w", err)
		}
		c.RedriveInterval = d
	}
	if v := getenv("LANES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return c, fmt.Errorf("LANES: %w", err)
		}
		c.Lanes = n
	}
	trusted := strings.Join(c.TrustedHosts, ",")
	fs.StringVar(&c.DatabaseURL, "database-url", c.DatabaseURL, "Postgres connection string (DATABASE_URL)")
	fs.StringVar(&c.PLCURL, "plc-url", c.PLCURL, "PLC directory URL (PLC_URL)")
	fs.StringVar(&trusted, "trusted-hosts", trusted, "comma-separated trusted bridge PDS hosts (TRUSTED_BRIDGE_PDS_HOSTS)")
	if fs.Name() == "serve" {
		fs.StringVar(&c.JetstreamURL, "jetstream-url", c.JetstreamURL, "Jetstream /subscribe URL (JETSTREAM_URL)")
		fs.StringVar(&c.Listen, "listen", c.Listen, "HTTP listen address (LISTEN)")
		fs.BoolVar(&c.IndexAllProfiles, "index-all-profiles", c.IndexAllProfiles, "index every verified profile, not only bridged ones (INDEX_ALL_PROFILES)")
		fs.DurationVar(&c.RedriveInterval, "redrive-interval", c.RedriveInterval, "redrive period (REDRIVE_INTERVAL)")
		fs.IntVar(&c.Lanes, "lanes", c.Lanes, "ordered per-DID lanes (LANES)")
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.TrustedHosts = splitList(trusted)
	if c.PLCURL == "" {
		c.PLCURL = PLCURLDefault
	}
	if c.Listen == "" {
		c.Listen = ListenDefault
	}
	return c, c.validate(fs.Name())
}

func (c Config) validate(cmd string) error {
	var errs []error
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("DATABASE_URL (or -database-url) is required"))
	}
	if u, err := url.Parse(c.PLCURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		errs = append(errs, fmt.Errorf("PLC_URL %q: want an http(s) URL", c.PLCURL))
	}
	if _, err := origin.NewTrustedHosts(c.TrustedHosts); err != nil {
		errs = append(errs, fmt.Errorf("TRUSTED_BRIDGE_PDS_HOSTS: %w", err))
	}
	if cmd == "serve" {
		if u, err := url.Parse(c.JetstreamURL); err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
			errs = append(errs, fmt.Errorf("JETSTREAM_URL %q: want a ws:// or wss:// /subscribe URL", c.JetstreamURL))
		}
		// Each redrive must reach the network, not a live debounce entry.
		if c.RedriveInterval <= identity.DebounceTTLDefault {
			errs = append(errs, fmt.Errorf("REDRIVE_INTERVAL %s must exceed the identity negative TTL %s", c.RedriveInterval, identity.DebounceTTLDefault))
		}
		if c.Lanes < 1 {
			errs = append(errs, errors.New("LANES must be at least 1"))
		}
	}
	return errors.Join(errs...)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// subscribeURL adds the collections the ingester reads, unless the
// operator already chose some. Identity and account events arrive anyway.
func subscribeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	if _, ok := q["wantedCollections"]; !ok {
		for _, c := range []string{ingest.CollectionProfile, ingest.CollectionPost, ingest.CollectionCommunityProfile} {
			q.Add("wantedCollections", c)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}
