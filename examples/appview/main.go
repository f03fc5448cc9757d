package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/examples/appview/internal/jetstream"
	"github.com/fedkit/fedkit/examples/appview/internal/xrpc"
	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/pgstore"
)

// Exit codes.
const (
	exitOK         = 0
	exitMismatch   = 1 // reconcile-handles: some bridged row does not match its verified handle
	exitRowErrors  = 2 // reconcile-handles: some row could not be checked
	exitFailure    = 3 // the command itself failed (database, options)
	exitUsage      = 64
	usageText      = "usage: appview serve|migrate|reconcile-handles [flags]\n"
	shutdownBudget = 10 * time.Second
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// env bundles what commands need from the process, so tests can run them.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// resolver, if set, replaces the network resolver (tests).
	resolver identity.Resolver
	// isTerminal reports whether stderr is a terminal.
	isTerminal bool
	// ready, if set, receives the HTTP listener address once serving.
	ready func(addr string)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	return runEnv(ctx, args, env{stdout: stdout, stderr: stderr, getenv: getenv, isTerminal: stderrIsTerminal()})
}

func runEnv(ctx context.Context, args []string, e env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usageText)
		return exitUsage
	}
	switch args[0] {
	case "serve":
		return cmdServe(ctx, args[1:], e)
	case "migrate":
		return cmdMigrate(ctx, args[1:], e)
	case "reconcile-handles":
		return cmdReconcile(ctx, args[1:], e)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(e.stdout, usageText)
		return exitOK
	}
	fmt.Fprintf(e.stderr, "appview: unknown command %q\n%s", args[0], usageText)
	return exitUsage
}

// configError reports a configuration error and returns the exit status:
// 0 after -h (the flag package printed the usage), 64 otherwise.
func configError(e env, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintln(e.stderr, "appview:", err)
	return exitUsage
}

func newLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func openPool(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	if maxConns > 0 {
		pc.MaxConns = maxConns
	}
	return pgxpool.NewWithConfig(ctx, pc)
}

// openLockPool is the lock's own pool: a waiter must never hold a slot the
// lock holder needs to finish.
func openLockPool(ctx context.Context, url string, size int32) (*pgxpool.Pool, error) {
	pc, err := pgstore.LockPoolConfig(url, size)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	return pgxpool.NewWithConfig(ctx, pc)
}

func newResolver(cfg Config) (identity.Resolver, error) {
	c, err := client.New(nil)
	if err != nil {
		return nil, err
	}
	// A *net.Resolver is the TXT resolver; identity classifies its errors.
	return identity.NewResolver(c, net.DefaultResolver, &identity.ResolverConfig{PLCURL: cfg.PLCURL})
}

func cmdMigrate(ctx context.Context, args []string, e env) int {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	cfg, err := loadConfig(fs, args, e.getenv)
	if err != nil {
		return configError(e, err)
	}
	pool, err := openPool(ctx, cfg.DatabaseURL, 2)
	if err != nil {
		fmt.Fprintln(e.stderr, "appview:", err)
		return exitFailure
	}
	defer pool.Close()
	applied, err := migrateVersions(ctx, pool)
	if err != nil {
		fmt.Fprintln(e.stderr, "appview:", err)
		return exitFailure
	}
	if len(applied) == 0 {
		fmt.Fprintln(e.stdout, "schema up to date")
	} else {
		fmt.Fprintln(e.stdout, "applied migrations", applied)
	}
	return exitOK
}

func cmdServe(ctx context.Context, args []string, e env) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	cfg, err := loadConfig(fs, args, e.getenv)
	if err != nil {
		return configError(e, err)
	}
	log := newLogger(e.stderr)
	if err := serve(ctx, cfg, e, log); err != nil {
		log.Error("appview: serve", "err", err)
		return exitFailure
	}
	return exitOK
}

func serve(ctx context.Context, cfg Config, e env, log *slog.Logger) error {
	pool, err := openPool(ctx, cfg.DatabaseURL, 0)
	if err != nil {
		return err
	}
	defer pool.Close()
	lockPool, err := openLockPool(ctx, cfg.DatabaseURL, pgstore.LockPoolSizeDefault)
	if err != nil {
		return err
	}
	defer lockPool.Close()
	if err := migrate(ctx, pool); err != nil {
		return err
	}
	res := e.resolver
	if res == nil {
		if res, err = newResolver(cfg); err != nil {
			return err
		}
	}
	a, err := newApp(appDeps{Pool: pool, LockPool: lockPool, Resolver: res, Logger: log}, cfg)
	if err != nil {
		return err
	}
	cons, err := jetstream.New(a.store, a.ingester.Handle, &jetstream.Config{
		URL: subscribeURL(cfg.JetstreamURL), Lanes: cfg.Lanes, Logger: log,
	})
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: xrpc.New(a.store, log), ReadHeaderTimeout: 10 * time.Second}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, 2)
	wg.Add(3)
	go func() {
		defer wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- err
			cancel()
		}
	}()
	go func() {
		defer wg.Done()
		if err := cons.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			errc <- err
			cancel()
		}
	}()
	go func() {
		defer wg.Done()
		a.ingester.RunRedriver(ctx, cfg.RedriveInterval, func(ctx context.Context, did string, fn func(context.Context)) error {
			return cons.Do(ctx, did, fn)
		})
	}()
	log.Info("appview: serving", "listen", ln.Addr().String(), "jetstream", cfg.JetstreamURL, "trusted_hosts", cfg.TrustedHosts)
	if e.ready != nil {
		e.ready(ln.Addr().String())
	}
	<-ctx.Done()
	sctx, scancel := context.WithTimeout(context.Background(), shutdownBudget)
	defer scancel()
	_ = srv.Shutdown(sctx)
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}
