package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/redisstate"
	"github.com/fedkit/fedkit/examples/relay/internal/config"
)

const directoryUsage = `usage:
  relay directory status [origin]
  relay directory register origin
  relay directory heartbeat origin
  relay directory unregister origin [--remove] [--acknowledge-external-disable]
  relay directory sync origin
`

// runDirectory runs the frozen Directory command surface.
func runDirectory(ctx context.Context, a *args, e *env) int {
	w := a.words[1:]
	if len(w) == 0 {
		fmt.Fprint(e.stderr, directoryUsage)
		return exitUsage
	}
	sub, rest := w[0], w[1:]
	switch {
	case sub == "status" && len(rest) <= 1:
	case (sub == "register" || sub == "heartbeat" || sub == "sync" || sub == "unregister") && len(rest) == 1:
	default:
		fmt.Fprintf(e.stderr, "relay: bad directory command\n%s", directoryUsage)
		return exitUsage
	}
	if (a.remove || a.ackExt) && sub != "unregister" {
		fmt.Fprintf(e.stderr, "relay: --remove and --acknowledge-external-disable go with unregister\n%s", directoryUsage)
		return exitUsage
	}
	cfg, code := loadConfig(a, e, false)
	if cfg == nil {
		return code
	}
	if sub == "status" && len(rest) == 0 {
		return directoryLocalStatus(ctx, cfg, e)
	}
	if a.ackExt && cfg.Path != "" && writable(cfg.Path) {
		// The flag is for environment-only configuration. Honouring it here
		// would leave `enabled: true` in the file, and the next restart
		// would register the relay the operator just removed.
		fmt.Fprintf(e.stderr, "relay: --acknowledge-external-disable is for environment-only configuration; %s is writable, so run unregister without it and the entry is disabled there durably\n%s", cfg.Path, directoryUsage)
		return exitUsage
	}
	origin, err := directory.ParseOrigin(rest[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "relay: %q is not a canonical https Directory origin (no path, no :443)\n", rest[0])
		return exitUsage
	}
	ap, err := openApp(ctx, cfg, e, false)
	if err != nil {
		fmt.Fprintf(e.stderr, "relay: %v\n", err)
		return exitFailed
	}
	defer ap.close()
	entries := cfg.Directory.Directories
	if sub == "status" {
		// The public status document is readable whether or not the origin
		// is configured.
		if _, ok := cfg.Directory.Lookup(origin); !ok {
			entries = append(entries, directory.Entry{Origin: origin})
		}
	} else if _, ok := cfg.Directory.Lookup(origin); !ok {
		fmt.Fprintf(e.stderr, "relay: %s is not in DIRECTORIES of %s; add it (enabled: true) first\n", origin, configName(cfg))
		return exitConfig
	}
	lc, err := newDirectoryClient(ap, e, entries)
	if err != nil {
		fmt.Fprintf(e.stderr, "relay: directory client: %v\n", err)
		return exitConfig
	}
	switch sub {
	case "status":
		return directoryRemoteStatus(ctx, lc, origin, e)
	case "unregister":
		return directoryUnregister(ctx, ap, lc, origin, a, e)
	default:
		return directoryManual(ctx, ap, lc, directory.ManualCommand(sub), origin, e)
	}
}

// writable reports whether the configuration file can be opened for
// writing (no truncation, nothing written): the durable unregister edit is
// then possible, and the environment-only acknowledgement is refused.
func writable(path string) bool {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return false
	}
	_ = f.Close()
	return true
}

func configName(cfg *config.Config) string {
	if cfg.Path == "" {
		return "the environment"
	}
	return cfg.Path
}

// stateStore is the Directory state store commands share with the
// scheduler: Redis when configured.
func stateStore(cfg *config.Config) (directory.StateStore, func(), error) {
	if cfg.RedisURL == "" {
		return nil, func() {}, nil
	}
	rdb, err := config.RedisClient(cfg.RedisURL)
	if err != nil {
		return nil, nil, err
	}
	st, err := redisstate.New(rdb, &redisstate.Config{KeyPrefix: cfg.RedisPrefix + "directory:"})
	if err != nil {
		_ = rdb.Close()
		return nil, nil, err
	}
	return st, func() { _ = rdb.Close() }, nil
}

func directoryLocalStatus(ctx context.Context, cfg *config.Config, e *env) int {
	st, done, err := stateStore(cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "relay: %v\n", err)
		return exitConfig
	}
	defer done()
	rows, err := directory.LocalStatus(ctx, cfg.Directory.Directories, st, time.Now())
	if err != nil {
		fmt.Fprintf(e.stderr, "relay: directory state unavailable: %v\n", err)
		return exitTempFail
	}
	if len(rows) == 0 {
		fmt.Fprintf(e.stdout, "no Directory configured in %s (DIRECTORIES is empty)\n", configName(cfg))
		return exitOK
	}
	src := "configuration only (no REDIS_URL)"
	if st != nil {
		src = "configuration and Redis state"
	}
	fmt.Fprintf(e.stdout, "Directories (%s; scheduler %s):\n", src, onOff(cfg.Directory.SchedulerEnabled))
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ORIGIN\tENABLED\tSTATE\tLAST SUCCESS\tNEXT HEARTBEAT\tRETRY AT\tLAST PROBLEM")
	for _, r := range rows {
		problem := strings.TrimSpace(string(r.Record.Code) + " " + string(r.Record.Diagnostic))
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Origin, yesNo(r.Enabled), r.State,
			when(r.Record.LastSuccess), when(r.Record.NextHeartbeat), when(r.Record.RetryAt), dash(problem))
	}
	_ = tw.Flush()
	return exitOK
}

func directoryRemoteStatus(ctx context.Context, lc *directory.Client, origin string, e *env) int {
	s, err := lc.Status(ctx, origin)
	if err != nil {
		return reportError(e, "status", origin, err)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "directory\t%s\n", origin)
	fmt.Fprintf(tw, "service\t%s %s (status schema %d)\n", s.Service, s.Version, s.SchemaVersion)
	fmt.Fprintf(tw, "public base URL\t%s\n", s.PublicBaseURL)
	fmt.Fprintf(tw, "lifecycle\tenabled %s, available %s\n", yesNo(s.LifecycleEnabled), yesNo(s.LifecycleAvailable))
	fmt.Fprintf(tw, "enrollment open\t%s\n", yesNo(s.EnrollmentOpen))
	if s.SchemaVersion >= 3 {
		fmt.Fprintf(tw, "public listing\tenabled %s, available %s\n", yesNo(s.PublicListingEnabled), yesNo(s.PublicListingAvailable))
	}
	vs := make([]string, 0, 3)
	for _, v := range s.Versions() {
		vs = append(vs, v.String())
	}
	fmt.Fprintf(tw, "protocols\t%s\n", strings.Join(vs, ", "))
	if !s.LifecycleEnabled || !s.LifecycleAvailable {
		// Negotiation is moot: every lifecycle call would be refused.
		why := "disabled"
		if s.LifecycleEnabled {
			why = "unavailable"
		}
		fmt.Fprintf(tw, "would use\tnone (lifecycle %s at this Directory; register, heartbeat and sync send nothing)\n", why)
	} else if v := s.Negotiate(); v.Valid() {
		fmt.Fprintf(tw, "would use\t%s\n", v)
	} else {
		fmt.Fprintf(tw, "would use\tnone (no protocol in common)\n")
	}
	_ = tw.Flush()
	return exitOK
}

func directoryManual(ctx context.Context, ap *app, lc *directory.Client, cmd directory.ManualCommand, origin string, e *env) int {
	opts := &directory.ManualOpts{}
	if ap.cfg.Directory.SchedulerEnabled && ap.cfg.RedisURL != "" {
		// Share the scheduler's lease and record the success, so the
		// scheduler does not repeat what the operator just did.
		opts.Store, opts.Relay = ap.dirState, ap.cfg.ActorURL()
	}
	res, err := directory.RunManual(ctx, lc, cmd, origin, opts)
	if err != nil && res != nil && res.Reconciled {
		// The heartbeat itself was answered relay_not_registered; say which
		// step of the one permitted reconciliation failed.
		if res.Operation == directory.OpRegister {
			fmt.Fprintf(e.stderr, "%s %s: the Directory answered relay_not_registered, so the relay re-registered once, and that register failed:\n", cmd, origin)
			return reportError(e, "register", origin, err)
		}
		fmt.Fprintf(e.stderr, "%s %s: the Directory answered relay_not_registered; the relay re-registered (registration %s) but the final heartbeat failed:\n", cmd, origin, dash(string(res.RegisterOutcome)))
		return reportError(e, "heartbeat", origin, err)
	}
	if err != nil {
		return reportError(e, string(cmd), origin, err)
	}
	printResult(e.stdout, res)
	return exitOK
}

func directoryUnregister(ctx context.Context, ap *app, lc *directory.Client, origin string, a *args, e *env) int {
	opts := &directory.UnregisterOpts{
		ConfigFile:                 ap.cfg.Path,
		Remove:                     a.remove,
		AcknowledgeExternalDisable: a.ackExt,
		Store:                      ap.dirState,
	}
	if ap.cfg.RedisURL == "" {
		opts.Store = nil // a memory store would fence nobody
	}
	if a.ackExt && opts.ConfigFile != "" {
		// A read-only file (runDirectory refused a writable one): the
		// operator manages configuration at its source and has disabled the
		// entry there; this copy cannot be edited.
		fmt.Fprintf(e.stderr, "warning: %s is read-only and is not edited; it must say enabled: false for %s (from its source) before the relay restarts\n", ap.cfg.Path, origin)
		opts.ConfigFile = ""
	}
	rep, err := directory.Unregister(ctx, lc, origin, opts)
	if rep != nil {
		for _, w := range rep.Warnings {
			fmt.Fprintf(e.stderr, "warning: %s\n", w)
		}
		if rep.Edited {
			fmt.Fprintf(e.stdout, "disabled %s in %s (backup: %s)\n", origin, ap.cfg.Path, dash(rep.Backup))
		}
	}
	if err != nil {
		code := reportError(e, "unregister", origin, err)
		if rep != nil && rep.Guidance != "" {
			fmt.Fprintln(e.stderr, rep.Guidance)
		}
		return code
	}
	if rep.Result != nil {
		printResult(e.stdout, rep.Result)
	}
	if rep.Removed {
		fmt.Fprintf(e.stdout, "removed %s from %s\n", origin, ap.cfg.Path)
	}
	fmt.Fprintf(e.stdout, "local state: %s\n", rep.State)
	if rep.Guidance != "" {
		fmt.Fprintln(e.stdout, rep.Guidance)
	}
	return exitOK
}

func printResult(w io.Writer, r *directory.Result) {
	fmt.Fprintf(w, "%s %s: %s (protocol %s, HTTP %d", r.Operation, r.Origin, r.Outcome, r.Version, r.StatusCode)
	if r.RegisterOutcome != "" && r.Operation != directory.OpRegister {
		fmt.Fprintf(w, ", registration %s", r.RegisterOutcome)
	}
	if r.Reconciled {
		fmt.Fprint(w, ", re-registered after relay_not_registered")
	}
	fmt.Fprintf(w, ", %d request(s))\n", r.Requests)
}

// reportError prints a failed Directory command and picks its exit code.
func reportError(e *env, op, origin string, err error) int {
	var re *directory.ResponseError
	var te *directory.TransportError
	switch {
	case errors.Is(err, directory.ErrLeaseHeld):
		fmt.Fprintf(e.stderr, "%s %s: another process (the scheduler) holds this Directory's lease; try again in a minute\n", op, origin)
		return exitTempFail
	case errors.Is(err, directory.ErrUnregisterPending):
		fmt.Fprintf(e.stderr, "%s %s: the entry is disabled locally but the Directory did not confirm (unregister-pending): %v\n", op, origin, err)
		return exitTempFail
	case errors.Is(err, directory.ErrLifecycleOff):
		var lo *directory.LifecycleOffError
		why := "off"
		if errors.As(err, &lo) {
			why = "disabled (lifecycle_enabled: false)"
			if lo.Enabled {
				why = "unavailable (lifecycle_available: false)"
			}
		}
		fmt.Fprintf(e.stderr, "%s %s: not sent: the Directory's status document reports its lifecycle service %s; try again once the Directory's operator enables it\n", op, origin, why)
		return exitFailed
	case errors.Is(err, directory.ErrDisabled):
		fmt.Fprintf(e.stderr, "%s %s: the entry is disabled in the configuration; set enabled: true first\n", op, origin)
		return exitConfig
	case errors.Is(err, directory.ErrAcknowledgementRequired), errors.Is(err, directory.ErrRemoveNeedsFile),
		errors.Is(err, directory.ErrConfigSymlink), errors.Is(err, directory.ErrConfig), errors.Is(err, directory.ErrUnknownDirectory):
		fmt.Fprintf(e.stderr, "%s %s: %v\n", op, origin, err)
		return exitConfig
	case errors.As(err, &re):
		fmt.Fprintf(e.stderr, "%s %s: refused: HTTP %d %s", op, origin, re.StatusCode, dash(string(re.Code)))
		if !re.RetryAt.IsZero() {
			fmt.Fprintf(e.stderr, "; retry after %s", re.RetryAt.UTC().Format(time.RFC3339))
		}
		fmt.Fprintln(e.stderr)
	case errors.As(err, &te):
		fmt.Fprintf(e.stderr, "%s %s: could not reach the Directory: %v\n", op, origin, err)
	default:
		fmt.Fprintf(e.stderr, "%s %s: %v\n", op, origin, err)
	}
	if directory.ClassOf(err) == directory.ClassRetryable {
		return exitTempFail
	}
	return exitFailed
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func when(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format(time.RFC3339)
}
