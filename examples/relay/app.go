package main

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/pgqueue"
	"github.com/fedkit/fedkit/deliver/redisbreaker"
	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/redisstate"
	"github.com/fedkit/fedkit/examples/relay/internal/config"
	"github.com/fedkit/fedkit/examples/relay/internal/redisseen"
	"github.com/fedkit/fedkit/examples/relay/internal/relay"
	"github.com/fedkit/fedkit/examples/relay/internal/store"
	"github.com/fedkit/fedkit/examples/relay/internal/store/pgstore"
	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/sig"
)

// KeyBits is the size of a generated actor key, as Mastodon's.
const KeyBits = 2048

// app is one relay process's parts.
type app struct {
	cfg       *config.Config
	log       *slog.Logger
	key       crypto.Signer
	httpc     *client.Client
	fetcher   *fetch.Fetcher
	store     store.Store
	queue     driver.Queue
	depth     func(context.Context) (relay.QueueDepth, error)
	breakers  relay.BreakerLights // the deliverer's own breaker store, read back
	brkName   string              // "memory" or "redis", for the status page
	health    *relay.Health
	deliverer *deliver.Deliverer
	relay     *relay.Relay
	pool      *pgxpool.Pool
	rdb       redis.UniversalClient
	dirState  directory.StateStore // nil without Redis (and without a scheduler)
	token     string
	tel       *telemetry
	avail     driver.AvailabilityStore // Redis, Postgres or memory: availability.go
	availName string
	schemes   sig.LearnedSchemeStore // Redis, Postgres or memory: schemes.go
}

func (a *app) close() {
	if a.tel != nil {
		a.tel.shutdown() // flushes OTLP; before the stores it may read close
	}
	if a.rdb != nil {
		_ = a.rdb.Close()
	}
	if a.pool != nil {
		a.pool.Close()
	}
	if a.httpc != nil {
		a.httpc.CloseIdleConnections()
	}
}

func newLogger(e *env) *slog.Logger {
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: e.logLevel}))
}

func subscribersFile(cfg *config.Config) string {
	return filepath.Join(cfg.DataDir, "subscribers.json")
}

// loadKey reads the actor key; create generates and persists one when the
// file does not exist (the server's first start).
func loadKey(path string, create bool) (crypto.Signer, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && create {
		k, err := rsa.GenerateKey(rand.Reader, KeyBits)
		if err != nil {
			return nil, err
		}
		pemBytes, err := sig.MarshalPrivateKeyPEM(k)
		if err != nil {
			return nil, err
		}
		if err := store.WriteFileAtomic(path, pemBytes, 0o600); err != nil {
			return nil, fmt.Errorf("actor key: %w", err)
		}
		return k, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("actor key %s does not exist: start the server once to generate it", path)
	}
	if err != nil {
		return nil, fmt.Errorf("actor key: %w", err)
	}
	k, err := sig.ParsePrivateKeyPEM(b)
	if err != nil {
		return nil, fmt.Errorf("actor key %s: %w", path, err)
	}
	if _, ok := k.(*rsa.PrivateKey); !ok {
		return nil, fmt.Errorf("actor key %s: must be RSA (Mastodon and the Directory expect rsa-sha256)", path)
	}
	return k, nil
}

// openApp connects the backends the configuration names and wires the relay.
func openApp(ctx context.Context, cfg *config.Config, e *env, createKey bool) (a *app, err error) {
	a = &app{cfg: cfg, log: newLogger(e)}
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	if a.key, err = loadKey(cfg.ActorKey, createKey); err != nil {
		return nil, err
	}
	if a.tel, err = newTelemetry(ctx, e); err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	a.httpc, err = client.New(&client.Config{AllowPrivate: e.allowPrivate, UserAgent: relay.SoftwareName + "/" + relay.Version + " (+" + cfg.ActorURL() + ")", Logger: a.log})
	if err != nil {
		return nil, err
	}
	signer, err := sig.NewSigner(a.key, cfg.KeyID(), nil)
	if err != nil {
		return nil, err
	}
	schemes := appSchemes{a} // shared: a host's scheme learned once
	a.fetcher, err = fetch.New(a.httpc, &fetch.Config{Signer: signer, Schemes: schemes, Timeout: 15 * time.Second, Logger: a.log,
		Alive: appAlive{a}, TracerProvider: a.tel.tracer, MeterProvider: a.tel.meter})
	if err != nil {
		return nil, err
	}

	if cfg.PostgresURL != "" {
		if a.pool, err = pgxpool.New(ctx, cfg.PostgresURL); err != nil {
			return nil, fmt.Errorf("postgres: %w", err)
		}
		ps := pgstore.New(a.pool)
		if err := ps.Migrate(ctx); err != nil {
			return nil, err
		}
		q, err := pgqueue.New(a.pool, &pgqueue.Config{Logger: a.log})
		if err != nil {
			return nil, err
		}
		if err := q.Migrate(ctx); err != nil {
			return nil, err
		}
		a.store, a.queue, a.depth = ps, q, laneDepth("postgres", q.Depth)
	} else {
		fs, err := store.OpenFile(subscribersFile(cfg))
		if err != nil {
			return nil, err
		}
		mq := &deliver.MemoryQueue{}
		a.store, a.queue, a.depth = fs, mq, laneDepth("memory", func(context.Context) (map[driver.Lane]int, error) { return mq.Depth(), nil })
	}

	dcfg := deliver.DefaultConfig()
	if e.tuneDeliver != nil {
		e.tuneDeliver(dcfg)
	}
	if cfg.RedisURL != "" {
		if a.rdb, err = config.RedisClient(cfg.RedisURL); err != nil {
			return nil, fmt.Errorf("redis: %w", err)
		}
		rs := redisbreaker.New(a.rdb, &redisbreaker.Config{KeyPrefix: cfg.RedisPrefix + "breaker:"})
		dcfg.Breaker.Store = rs
		a.breakers, a.brkName = rs, "redis"
		if a.dirState, err = redisstate.New(a.rdb, &redisstate.Config{KeyPrefix: cfg.RedisPrefix + "directory:"}); err != nil {
			return nil, err
		}
	} else {
		if cfg.Directory.SchedulerEnabled {
			// One process without Redis: the scheduler's state lives in memory.
			a.dirState = &directory.MemoryStateStore{}
		}
		// A store of ours rather than one the deliverer would make for
		// itself, so the status page reads back the state it acts on.
		mb := &deliver.MemoryBreakerStore{}
		dcfg.Breaker.Store = mb
		a.breakers, a.brkName = relay.MemoryLights{Store: mb}, "memory"
	}
	if err := a.openAvailability(ctx, cfg); err != nil {
		return nil, err
	}
	if err := a.openSchemes(ctx, cfg); err != nil {
		return nil, err
	}
	dcfg.Availability.Store = a.avail
	a.health = relay.NewHealth(dcfg.Breaker.Threshold)
	// The status page, and its deliveries-per-minute chart; the metrics
	// are deliver's own (fedkit.deliver.*), from the providers below.
	dcfg.OnAttempt = a.health.OnAttempt
	dcfg.TracerProvider, dcfg.MeterProvider = a.tel.tracer, a.tel.meter
	dcfg.SkipIf = relay.SkipUnsubscribed(a.store, 5*time.Second)
	dcfg.Schemes = a.schemes
	dcfg.Concurrency = cfg.JobConcurrency
	dcfg.Logger = a.log
	dcfg.OnFailure = func(ctx context.Context, f deliver.Failure) {
		a.log.InfoContext(ctx, "delivery refused", "inbox", f.Inbox, "status", f.StatusCode, "activity", f.ActivityID)
	}
	keys := deliver.NewCachingSenderKeys(staticKeys{id: cfg.KeyID(), key: a.key}, nil)
	if a.deliverer, err = deliver.New(a.queue, keys, a.httpc, dcfg); err != nil {
		return nil, err
	}

	a.token = cfg.AdminToken
	if a.token == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		a.token = hex.EncodeToString(b[:])
	}
	// The seen-set (the loop guard) is shared by every process: in Redis
	// when there is one, else in Postgres; a single process without either
	// keeps it in memory.
	var seen relay.SeenSet
	switch {
	case a.rdb != nil:
		seen = redisseen.New(a.rdb, &redisseen.Config{KeyPrefix: cfg.RedisPrefix + "seen:"})
	case a.pool != nil:
		seen = pgstore.NewSeen(a.pool)
	}
	a.relay, err = relay.New(&relay.Config{
		PublicURL: cfg.PublicURL, Name: cfg.ServiceName, Summary: cfg.Summary, Key: a.key,
		Store: a.store, Sender: a.deliverer, Lookup: a.fetcher, ManualApproval: cfg.ManualApproval,
		Blocked: cfg.BlockedDomains, Allowed: cfg.AllowedDomains, AdminToken: a.token,
		Health: a.health, Status: statusSource{a}, Breakers: a.breakers, BreakerStore: a.brkName, Logger: a.log,
		Seen: seen, Availability: a.avail, RatePerMinute: cfg.RateLimitPerMinute, RateBurst: cfg.RateLimitBurst, DisableRateLimit: cfg.RateLimitDisabled,
		Metrics: a.adminMetrics(), TracerProvider: a.tel.tracer, MeterProvider: a.tel.meter,
	})
	if err != nil {
		return nil, err
	}
	if err := a.tel.observe(a); err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	return a, nil
}

// adminMetrics is /metrics for the main listener, behind the admin token:
// nil when METRICS_LISTEN gives the metrics a listener of their own.
func (a *app) adminMetrics() http.Handler {
	if a.cfg.MetricsListen != "" {
		return nil
	}
	return a.tel.metrics
}

// staticKeys is the deliverer's SenderKeys: the relay signs with one key.
type staticKeys struct {
	id  string
	key crypto.Signer
}

func (k staticKeys) Key(_ context.Context, keyID string) (crypto.Signer, error) {
	if keyID != k.id {
		return nil, fmt.Errorf("unknown key %s", keyID)
	}
	return k.key, nil
}

func (staticKeys) Gone(context.Context, string) (bool, error) { return false, nil }

// laneDepth reads a queue's per-lane depth (pgqueue's across every process
// sharing it, the in-memory queue's in this process) for the status page.
func laneDepth(backend string, depth func(context.Context) (map[driver.Lane]int, error)) func(context.Context) (relay.QueueDepth, error) {
	return func(ctx context.Context) (relay.QueueDepth, error) {
		m, err := depth(ctx)
		if err != nil {
			return relay.QueueDepth{}, err
		}
		return relay.QueueDepth{Backend: backend, Priority: m[driver.LanePriority], Normal: m[driver.LaneNormal], Low: m[driver.LaneLow]}, nil
	}
}

// statusSource feeds the status page the queue and Directory sections.
type statusSource struct{ a *app }

func (s statusSource) QueueDepth(ctx context.Context) (relay.QueueDepth, error) {
	return s.a.depth(ctx)
}

func (s statusSource) Directories(ctx context.Context) ([]relay.DirectoryRow, error) {
	entries := s.a.cfg.Directory.Directories
	if s.a.cfg.Path != "" {
		// Reread the file: unregister may have disabled or removed an entry.
		if b, err := os.ReadFile(s.a.cfg.Path); err == nil {
			if st, _, err := directory.ParseConfig(b, nil); err == nil {
				entries = st.Directories
			}
		}
	}
	st, err := directory.LocalStatus(ctx, entries, s.a.dirState, time.Now())
	if err != nil {
		return nil, err
	}
	rows := make([]relay.DirectoryRow, 0, len(st))
	for _, e := range st {
		rows = append(rows, relay.DirectoryRow{Origin: e.Origin, Enabled: e.Enabled, State: string(e.State),
			LastSuccess: e.Record.LastSuccess, NextHeartbeat: e.Record.NextHeartbeat, RetryAt: e.Record.RetryAt,
			Code: string(e.Record.Code), Diagnostic: string(e.Record.Diagnostic)})
	}
	return rows, nil
}
