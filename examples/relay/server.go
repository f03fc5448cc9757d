package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/examples/relay/internal/config"
)

// Shutdown budgets.
const (
	httpShutdownGrace = 15 * time.Second
)

func runServer(ctx context.Context, cfg *config.Config, e *env) int {
	a, err := openApp(ctx, cfg, e, true)
	if err != nil {
		fmt.Fprintf(e.stderr, "relay: %v\n", err)
		return exitFailed
	}
	defer a.close()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		fmt.Fprintf(e.stderr, "relay: listen: %v\n", err)
		return exitFailed
	}
	srv := &http.Server{
		Handler:           a.relay.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}

	var wg sync.WaitGroup
	// Deliveries outlive the HTTP server by a little: requests being served
	// when the signal came still enqueue, and the deliverer then finishes
	// what is in flight (ShutdownGrace) and gives back what it claimed.
	dctx, stopDeliver := context.WithCancel(context.WithoutCancel(ctx))
	defer stopDeliver()
	wg.Go(func() {
		if err := a.deliverer.Run(dctx); err != nil {
			a.log.Error("deliverer stopped", "err", err)
		}
	})
	if cfg.Directory.SchedulerEnabled {
		sched, err := newScheduler(a, e)
		if err != nil {
			a.log.Error("directory scheduler not started", "err", err)
		} else {
			// The scheduler stops with ctx and releases its leases.
			wg.Go(func() { _ = sched.Run(ctx) })
		}
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	stopMetrics, err := serveMetrics(a, e)
	if err != nil {
		fmt.Fprintf(e.stderr, "relay: %v\n", err)
		_ = srv.Close()
		stopDeliver()
		wg.Wait()
		return exitFailed
	}
	defer stopMetrics()

	addr := ln.Addr().String()
	a.log.Info("relay serving", "listen", addr, "actor", cfg.ActorURL(), "subscribers", storageName(cfg), "queue", queueName(cfg))
	if cfg.AdminToken == "" {
		a.log.Info("status page (token made for this run; set ADMIN_TOKEN to keep one)", "url", "http://"+addr+"/admin/status?token="+a.token)
	} else {
		a.log.Info("status page", "url", "http://"+addr+"/admin/status", "auth", "Authorization: Bearer ADMIN_TOKEN, or ?token=")
	}
	if e.ready != nil {
		e.ready(addr, a)
	}

	code := exitOK
	select {
	case <-ctx.Done():
		a.log.Info("shutting down")
	case err := <-serveErr:
		a.log.Error("http server failed", "err", err)
		code = exitFailed
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), httpShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		a.log.Warn("http shutdown", "err", err)
	}
	stopDeliver()
	wg.Wait()
	a.log.Info("stopped")
	return code
}

func runWorker(ctx context.Context, cfg *config.Config, e *env) int {
	if cfg.PostgresURL == "" {
		fmt.Fprintln(e.stderr, "relay: worker needs POSTGRES_URL: the embedded default's queue lives inside the server process")
		return exitConfig
	}
	a, err := openApp(ctx, cfg, e, false)
	if err != nil {
		fmt.Fprintf(e.stderr, "relay: %v\n", err)
		return exitFailed
	}
	defer a.close()
	stopMetrics, err := serveMetrics(a, e)
	if err != nil {
		fmt.Fprintf(e.stderr, "relay: %v\n", err)
		return exitFailed
	}
	defer stopMetrics()
	a.log.Info("relay worker delivering", "queue", queueName(cfg))
	if e.ready != nil {
		e.ready("", a)
	}
	// Workers never run the Directory scheduler: only the server does.
	if err := a.deliverer.Run(ctx); err != nil {
		fmt.Fprintf(e.stderr, "relay: %v\n", err)
		return exitFailed
	}
	a.log.Info("stopped")
	return exitOK
}

// serveMetrics serves /metrics on METRICS_LISTEN, when set, without the
// admin token: the address is the operator's boundary. It returns the
// function that stops it.
func serveMetrics(a *app, e *env) (func(), error) {
	if a.cfg.MetricsListen == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", a.cfg.MetricsListen)
	if err != nil {
		return nil, fmt.Errorf("metrics listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.tel.metrics)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	a.log.Info("metrics serving", "url", "http://"+ln.Addr().String()+"/metrics")
	if e.metricsReady != nil {
		e.metricsReady(ln.Addr().String())
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), httpShutdownGrace)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// newDirectoryClient builds the Directory client from the relay identity.
func newDirectoryClient(a *app, e *env, entries []directory.Entry) (*directory.Client, error) {
	return directory.New(a.key, &directory.Config{
		Actor:         a.cfg.ActorURL(),
		PublicBaseURL: a.cfg.PublicURL,
		KeyID:         a.cfg.KeyID(),
		Directories:   entries,
		Profile:       a.cfg.Directory.Profile,
		Telemetry:     a.relay.ActiveSubscribers, // participating_instance_count
		HTTP:          e.directoryHTTP,
		Logger:        a.log,

		TracerProvider: a.tel.tracer,
		MeterProvider:  a.tel.meter,
	})
}

func newScheduler(a *app, e *env) (*directory.Scheduler, error) {
	lc, err := newDirectoryClient(a, e, a.cfg.Directory.Directories)
	if err != nil {
		return nil, err
	}
	return directory.NewScheduler(lc, a.dirState, &directory.SchedulerConfig{
		ConfigFile: a.cfg.Path,
		Relay:      a.cfg.ActorURL(),
		Logger:     a.log,

		TracerProvider: a.tel.tracer,
		MeterProvider:  a.tel.meter,
	})
}
