package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"golang.org/x/term"

	"github.com/fedkit/fedkit/identity"
)

// RateDefault is reconcile-handles' default -rate: gentle on the PLC
// directory, still thousands of rows per ten minutes.
const RateDefault = 10

func stderrIsTerminal() bool { return term.IsTerminal(int(os.Stderr.Fd())) }

// reconcileFlags are reconcile-handles' own flags.
type reconcileFlags struct {
	dryRun      bool
	clearCache  bool
	concurrency int
	jsonOut     bool
	rate        float64
}

// cmdReconcile re-checks every bridged row (stored PDS on a trusted host),
// and every row holding origin fields on a host off the trusted list (so
// removing a host clears its rows' fields, spec 5.2), through the same
// locked refresh as the consumer. Exit status: 0 when
// every row matches its verified handle; 1 when some row does not (a dry
// run that would update); 2 when some row could not be checked; 3 when the
// run itself failed; 64 for bad usage.
func cmdReconcile(ctx context.Context, args []string, e env) int {
	fs := flag.NewFlagSet("reconcile-handles", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	var rf reconcileFlags
	fs.BoolVar(&rf.dryRun, "dry-run", false, "resolve and verify only; change nothing")
	fs.BoolVar(&rf.clearCache, "clear-identity-cache", false, "empty identity_cache first (not with -dry-run)")
	fs.IntVar(&rf.concurrency, "concurrency", identity.SweepConcurrencyDefault, "rows checked at once (also the lock pool size)")
	fs.BoolVar(&rf.jsonOut, "json", false, "print the report as JSON on stdout")
	fs.Float64Var(&rf.rate, "rate", RateDefault, "resolutions per second per host (PLC counts as one host); 0 = unlimited")
	cfg, err := loadConfig(fs, args, e.getenv)
	if err != nil {
		return configError(e, err)
	}
	if rf.dryRun && rf.clearCache {
		fmt.Fprintln(e.stderr, "appview: -clear-identity-cache cannot be combined with -dry-run")
		return exitUsage
	}
	if rf.concurrency < 1 || rf.concurrency > 64 {
		fmt.Fprintln(e.stderr, "appview: -concurrency must be 1-64")
		return exitUsage
	}
	if rf.rate < 0 {
		fmt.Fprintln(e.stderr, "appview: -rate must not be negative")
		return exitUsage
	}
	if len(cfg.TrustedHosts) == 0 {
		fmt.Fprintln(e.stderr, "appview: no trusted hosts: set -trusted-hosts or TRUSTED_BRIDGE_PDS_HOSTS")
		return exitUsage
	}

	pool, err := openPool(ctx, cfg.DatabaseURL, int32(rf.concurrency)+2)
	if err != nil {
		fmt.Fprintln(e.stderr, "appview:", err)
		return exitFailure
	}
	defer pool.Close()
	lockPool, err := openLockPool(ctx, cfg.DatabaseURL, int32(rf.concurrency))
	if err != nil {
		fmt.Fprintln(e.stderr, "appview:", err)
		return exitFailure
	}
	defer lockPool.Close()
	if err := migrate(ctx, pool); err != nil {
		fmt.Fprintln(e.stderr, "appview:", err)
		return exitFailure
	}
	res := e.resolver
	if res == nil {
		if res, err = newResolver(cfg); err != nil {
			fmt.Fprintln(e.stderr, "appview:", err)
			return exitFailure
		}
	}
	res = newLimitedResolver(res, rf.rate)
	a, err := newApp(appDeps{Pool: pool, LockPool: lockPool, Resolver: res, Logger: newLogger(e.stderr)}, cfg)
	if err != nil {
		fmt.Fprintln(e.stderr, "appview:", err)
		return exitFailure
	}
	return reconcile(ctx, a, cfg, rf, e)
}

func reconcile(ctx context.Context, a *app, cfg Config, rf reconcileFlags, e env) int {
	p := &progress{env: e}
	rep, err := a.refresher.Sweep(ctx, a.store.Identity(), &identity.SweepOpts{
		DryRun:          rf.dryRun,
		ClearCacheFirst: rf.clearCache,
		TrustedHosts:    cfg.TrustedHosts,
		Concurrency:     rf.concurrency,
		Progress:        p.row,
	})
	p.end()
	if err != nil {
		fmt.Fprintln(e.stderr, "appview: reconcile-handles:", err)
		return exitFailure
	}
	mismatch, errored := 0, 0
	for _, r := range rep.Rows {
		switch {
		case r.Matched():
		case r.Reason == identity.ReasonWouldUpdate:
			mismatch++
		default:
			errored++
		}
	}
	if rf.jsonOut {
		type row struct {
			DID           string `json:"did"`
			Kind          string `json:"kind"`
			Stored        string `json:"stored"`
			Verified      string `json:"verified,omitempty"`
			Reason        string `json:"reason"`
			OriginCleared bool   `json:"originCleared,omitempty"`
			OffList       bool   `json:"offList,omitempty"`
		}
		t := tallyOf(rep)
		out := struct {
			DryRun        bool           `json:"dryRun"`
			AllMatched    bool           `json:"allMatched"`
			Counts        map[string]int `json:"counts"`
			OffList       int            `json:"offList"`
			OriginCleared int            `json:"originCleared"`
			Rows          []row          `json:"rows"`
		}{DryRun: rep.DryRun, AllMatched: rep.AllMatched(), Counts: rep.Counts(), OffList: t.offList, OriginCleared: t.cleared, Rows: []row{}}
		for _, r := range rep.Rows {
			out.Rows = append(out.Rows, row{string(r.DID), r.Kind.String(), string(r.Stored), string(r.Verified), r.Reason, r.OriginCleared, r.OffList})
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
	} else {
		fmt.Fprint(e.stdout, summary(rep))
	}
	switch {
	case errored > 0:
		return exitRowErrors
	case mismatch > 0 || !rep.AllMatched():
		return exitMismatch
	}
	return exitOK
}

// tally counts the rows checked because they hold origin fields off the
// trusted list (SweepRow.OffList) and the rows whose origin fields were
// cleared, of which off-list.
type tally struct{ offList, cleared, clearedOffList int }

func tallyOf(rep *identity.SweepReport) tally {
	var t tally
	for _, r := range rep.Rows {
		if r.OffList {
			t.offList++
		}
		if r.OriginCleared {
			t.cleared++
			if r.OffList {
				t.clearedOffList++
			}
		}
	}
	return t
}

// summary is the row counts, one line per reason code, the origin clears,
// then the verdict.
func summary(rep *identity.SweepReport) string {
	var b strings.Builder
	counts := rep.Counts()
	reasons := make([]string, 0, len(counts))
	for r := range counts {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	mode := "run"
	if rep.DryRun {
		mode = "dry run"
	}
	t := tallyOf(rep)
	fmt.Fprintf(&b, "reconcile-handles %s: %d bridged rows, %d off-list rows (origin fields on a host not trusted)\n",
		mode, len(rep.Rows)-t.offList, t.offList)
	for _, r := range reasons {
		fmt.Fprintf(&b, "  %-18s %d\n", r, counts[r])
	}
	if rep.DryRun {
		// Sweep's dry run resolves only: it does not say which rows a run
		// would clear, so claim nothing.
		b.WriteString("origin fields cleared: none (dry run)\n")
	} else {
		fmt.Fprintf(&b, "origin fields cleared: %d rows (%d off-list)\n", t.cleared, t.clearedOffList)
	}
	if rep.AllMatched() {
		b.WriteString("every bridged row matches its verified handle\n")
	} else {
		b.WriteString("NOT every bridged row matches its verified handle: fix and re-run\n")
	}
	return b.String()
}

// progress writes a live line on a terminal, or one plain line per row.
// Sweep calls row from one goroutine at a time.
type progress struct {
	env          env
	n, bad, live int
	lastWidth    int
}

func (p *progress) row(sp identity.SweepProgress) {
	p.n = sp.Done
	if !sp.Row.Matched() {
		p.bad++
	}
	if p.env.isTerminal {
		line := fmt.Sprintf("\rreconcile-handles: %d checked, %d not matching (last: %s %s)", p.n, p.bad, sp.Row.DID, sp.Row.Reason)
		pad := p.lastWidth - len(line)
		p.lastWidth = len(line)
		if pad > 0 {
			line += strings.Repeat(" ", pad)
		}
		fmt.Fprint(p.env.stderr, line)
		p.live = 1
		return
	}
	r := sp.Row
	fmt.Fprintf(p.env.stderr, "%s %s stored=%s verified=%s reason=%s", r.DID, r.Kind, r.Stored, r.Verified, r.Reason)
	if r.OffList {
		fmt.Fprint(p.env.stderr, " off-list")
	}
	if r.OriginCleared {
		fmt.Fprint(p.env.stderr, " origin-cleared")
	}
	fmt.Fprintln(p.env.stderr)
}

func (p *progress) end() {
	if p.live > 0 {
		fmt.Fprintln(p.env.stderr)
	}
}
