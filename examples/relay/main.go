package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/examples/relay/internal/config"
	"github.com/fedkit/fedkit/examples/relay/internal/relay"
)

// Exit codes.
const (
	exitOK       = 0
	exitFailed   = 1  // the command ran and failed (a refusal, an invalid response)
	exitUsage    = 2  // bad command line
	exitConfig   = 3  // invalid configuration (relay -t, or any command)
	exitTempFail = 75 // try again later (EX_TEMPFAIL): retryable failure, lease held, unregister pending
)

const usageText = `usage:
  relay [-c FILE] [server]          serve the relay (HTTP, deliveries, Directory scheduler)
  relay [-c FILE] worker            deliver only (needs POSTGRES_URL)
  relay -t | --test-config [-c FILE] [--strict]
                                    validate the configuration; no network, no state changes
  relay [-c FILE] directory status [origin]
  relay [-c FILE] directory register origin
  relay [-c FILE] directory heartbeat origin
  relay [-c FILE] directory unregister origin [--remove] [--acknowledge-external-disable]
  relay [-c FILE] directory sync origin
  relay [-c FILE] subscribers unavailable [--remove [--yes]]
                                    subscribers whose host has been unavailable 30 days;
                                    --remove deletes them after confirmation
  relay [-c FILE] hosts available host
                                    the operator's clear: deliver to host again

-c defaults to ./config.yml; without it the configuration comes from the
environment (PUBLIC_URL, LISTEN, DATA_DIR, POSTGRES_URL, REDIS_URL, ...).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], &env{stdout: os.Stdout, stderr: os.Stderr, lookupEnv: os.LookupEnv, stdin: os.Stdin})
	stop()
	os.Exit(code)
}

// env is what commands take from the process, so tests can run them in-process.
type env struct {
	stdout, stderr io.Writer
	lookupEnv      func(string) (string, bool)
	stdin          io.Reader // confirmations; nil reads nothing (no confirmation)

	// For tests only.
	allowPrivate  []netip.Prefix            // admitted by the guarded client (127.0.0.0/8 in tests)
	directoryHTTP directory.Doer            // reaches the fake Directory
	tuneDeliver   func(*deliver.Config)     // faster retries and polling
	ready         func(addr string, a *app) // called once the server listens
	metricsReady  func(addr string)         // called once METRICS_LISTEN listens
	logLevel      slog.Level
}

type args struct {
	configPath string
	configSet  bool
	testConfig bool
	strict     bool
	remove     bool
	ackExt     bool
	yes        bool
	words      []string
}

// parseArgs accepts flags anywhere, so `relay directory unregister X --remove`
// and `relay -c f directory ...` both read naturally.
func parseArgs(argv []string) (*args, error) {
	a := &args{configPath: "config.yml"}
	for i := 0; i < len(argv); i++ {
		s := argv[i]
		switch {
		case s == "-c" || s == "--config" || s == "-config":
			if i+1 >= len(argv) {
				return nil, fmt.Errorf("%s needs a file", s)
			}
			i++
			a.configPath, a.configSet = argv[i], true
		case strings.HasPrefix(s, "-c=") || strings.HasPrefix(s, "--config="):
			a.configPath, a.configSet = s[strings.IndexByte(s, '=')+1:], true
		case s == "-t" || s == "--test-config" || s == "-test-config":
			a.testConfig = true
		case s == "--strict" || s == "-strict":
			a.strict = true
		case s == "--remove" || s == "-remove":
			a.remove = true
		case s == "--acknowledge-external-disable" || s == "-acknowledge-external-disable":
			a.ackExt = true
		case s == "--yes" || s == "-yes":
			a.yes = true
		case s == "-h" || s == "--help" || s == "-help":
			return nil, errHelp
		case strings.HasPrefix(s, "-") && s != "-":
			return nil, fmt.Errorf("unknown flag %s", s)
		default:
			a.words = append(a.words, s)
		}
	}
	return a, nil
}

var errHelp = errors.New("help")

func run(ctx context.Context, argv []string, e *env) int {
	a, err := parseArgs(argv)
	if errors.Is(err, errHelp) {
		fmt.Fprint(e.stdout, usageText)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "relay: %v\n%s", err, usageText)
		return exitUsage
	}
	if a.testConfig {
		if len(a.words) > 0 {
			fmt.Fprintf(e.stderr, "relay: -t takes no command\n%s", usageText)
			return exitUsage
		}
		return testConfig(a, e)
	}
	if len(a.words) > 0 && a.words[0] == "subscribers" {
		return runSubscribers(ctx, a, e)
	}
	if len(a.words) > 0 && a.words[0] == "hosts" {
		return runHosts(ctx, a, e)
	}
	if a.yes {
		fmt.Fprintf(e.stderr, "relay: --yes goes with subscribers unavailable --remove\n%s", usageText)
		return exitUsage
	}
	if (a.strict || a.remove || a.ackExt) && (len(a.words) < 2 || a.words[0] != "directory") {
		if a.strict {
			fmt.Fprintf(e.stderr, "relay: --strict goes with -t\n%s", usageText)
		} else {
			fmt.Fprintf(e.stderr, "relay: --remove and --acknowledge-external-disable go with directory unregister\n%s", usageText)
		}
		return exitUsage
	}
	cmd := "server"
	if len(a.words) > 0 {
		cmd = a.words[0]
	}
	switch cmd {
	case "server", "worker":
		if len(a.words) > 1 {
			fmt.Fprintf(e.stderr, "relay: %s takes no arguments\n%s", cmd, usageText)
			return exitUsage
		}
		cfg, code := loadConfig(a, e, false)
		if cfg == nil {
			return code
		}
		if cmd == "worker" {
			return runWorker(ctx, cfg, e)
		}
		return runServer(ctx, cfg, e)
	case "directory":
		return runDirectory(ctx, a, e)
	default:
		fmt.Fprintf(e.stderr, "relay: unknown command %q\n%s", cmd, usageText)
		return exitUsage
	}
}

// loadConfig loads -c FILE; an unset -c falls back to ./config.yml and,
// failing that, to the environment.
func loadConfig(a *args, e *env, strict bool) (*config.Config, int) {
	opts := &config.LoadOpts{Strict: strict}
	var cfg *config.Config
	var err error
	if _, statErr := os.Stat(a.configPath); !a.configSet && errors.Is(statErr, fs.ErrNotExist) {
		cfg, err = config.FromEnv(e.lookupEnv, opts)
	} else {
		cfg, err = config.Load(a.configPath, e.lookupEnv, opts)
	}
	if cfg != nil {
		for _, w := range cfg.Warnings {
			fmt.Fprintf(e.stderr, "warning: %s\n", w)
		}
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "relay: configuration: %v\n", err)
		return nil, exitConfig
	}
	return cfg, exitOK
}

// testConfig is relay -t: load and validate, print what would be used, touch
// nothing (no key generation, no connections, no Directory or Redis traffic).
func testConfig(a *args, e *env) int {
	cfg, code := loadConfig(a, e, a.strict)
	if cfg == nil {
		return code
	}
	for _, n := range cfg.Notes {
		fmt.Fprintf(e.stdout, "note: %s\n", n)
	}
	src := cfg.Path
	if src == "" {
		src = "environment"
	}
	fmt.Fprintf(e.stdout, "configuration %s: ok\n", src)
	fmt.Fprintf(e.stdout, "  actor          %s\n", cfg.ActorURL())
	fmt.Fprintf(e.stdout, "  listen         %s\n", cfg.Listen)
	fmt.Fprintf(e.stdout, "  subscribers    %s\n", storageName(cfg))
	fmt.Fprintf(e.stdout, "  queue          %s\n", queueName(cfg))
	fmt.Fprintf(e.stdout, "  breakers       %s\n", breakerName(cfg))
	fmt.Fprintf(e.stdout, "  seen-set       %s\n", seenName(cfg))
	fmt.Fprintf(e.stdout, "  rate limit     %s\n", rateLimitName(cfg))
	fmt.Fprintf(e.stdout, "  directories    %d configured, %d enabled, scheduler %s\n",
		len(cfg.Directory.Directories), countEnabled(cfg.Directory.Directories), onOff(cfg.Directory.SchedulerEnabled))
	if len(cfg.Warnings) > 0 {
		fmt.Fprintf(e.stdout, "%d warning(s); --strict makes them fail\n", len(cfg.Warnings))
	}
	return exitOK
}

func storageName(cfg *config.Config) string {
	if cfg.PostgresURL != "" {
		return "postgres"
	}
	return "embedded file " + subscribersFile(cfg)
}

func queueName(cfg *config.Config) string {
	if cfg.PostgresURL != "" {
		return "postgres (durable; workers may share it)"
	}
	return "memory (pending deliveries are lost on restart)"
}

func seenName(cfg *config.Config) string {
	switch {
	case cfg.RedisURL != "":
		return "redis (shared by every process)"
	case cfg.PostgresURL != "":
		return "postgres (shared by every process)"
	}
	return "memory (per process)"
}

func rateLimitName(cfg *config.Config) string {
	if cfg.RateLimitDisabled {
		return "off"
	}
	perMinute, burst := cfg.RateLimitPerMinute, cfg.RateLimitBurst
	if perMinute == 0 {
		perMinute = relay.RatePerMinuteDefault
	}
	if burst == 0 {
		burst = relay.RateBurstDefault
	}
	return fmt.Sprintf("%d a minute per server, bursts of %d (each process counts alone)", perMinute, burst)
}

func breakerName(cfg *config.Config) string {
	if cfg.RedisURL != "" {
		return "redis (shared by every process)"
	}
	return "memory (per process)"
}

func countEnabled(es []directory.Entry) int {
	n := 0
	for _, e := range es {
		if e.Enabled {
			n++
		}
	}
	return n
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
