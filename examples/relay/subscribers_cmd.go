package main

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fedkit/fedkit/examples/relay/internal/relay"
)

const subscribersUsage = `usage:
  relay [-c FILE] subscribers unavailable [--remove [--yes]]

Lists the subscribers whose host the deliverer has found unavailable for
30 days or more (failing on 7 distinct days with no success, then never
seen alive since). --remove deletes them from the subscriber list after
asking for confirmation (type "yes"); --yes confirms in advance. The
availability store must be shared (REDIS_URL or POSTGRES_URL): a relay
without either keeps it in the server's memory, out of this command's reach.
`

// runSubscribers runs `relay subscribers unavailable`.
func runSubscribers(ctx context.Context, a *args, e *env) int {
	if len(a.words) != 2 || a.words[1] != "unavailable" || a.strict || a.ackExt || (a.yes && !a.remove) {
		fmt.Fprint(e.stderr, subscribersUsage)
		return exitUsage
	}
	cfg, code := loadConfig(a, e, false)
	if cfg == nil {
		return code
	}
	ap, err := openApp(ctx, cfg, e, false)
	if err != nil {
		fmt.Fprintf(e.stderr, "relay: %v\n", err)
		return exitFailed
	}
	defer ap.close()
	if ap.availName == "memory" {
		fmt.Fprintf(e.stderr, "relay: no shared availability store: configure REDIS_URL or POSTGRES_URL (without them the server keeps it in its own memory)\n")
		return exitConfig
	}
	down, err := ap.avail.ListUnavailable(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "relay: availability store: %v\n", err)
		return exitTempFail
	}
	subs, err := ap.store.List(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "relay: subscribers: %v\n", err)
		return exitTempFail
	}
	now := time.Now()
	gone := relay.RemovalCandidates(subs, down, now, relay.RemovalAfterDefault)
	since := map[string]time.Time{}
	for _, u := range down {
		since[u.Host] = u.Since
	}
	if len(gone) == 0 {
		fmt.Fprintf(e.stdout, "no subscriber's host has been unavailable for %d days (%d hosts unavailable)\n",
			int(relay.RemovalAfterDefault/(24*time.Hour)), len(down))
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "actor\thost\tunavailable since")
	for _, s := range gone {
		h := relay.InboxHost(s)
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Actor, h, since[h].UTC().Format(time.DateOnly))
	}
	_ = tw.Flush()
	if !a.remove {
		fmt.Fprintf(e.stdout, "%d subscribers; run with --remove to delete them\n", len(gone))
		return exitOK
	}
	if !a.yes && !confirm(e, fmt.Sprintf("remove these %d subscribers? type yes: ", len(gone))) {
		fmt.Fprintln(e.stdout, "nothing removed")
		return exitFailed
	}
	removed := 0
	for _, s := range gone {
		// No Reject is sent: the host has not answered for a month.
		if ok, err := ap.store.Delete(ctx, s.Actor); err != nil {
			fmt.Fprintf(e.stderr, "relay: removing %s: %v\n", s.Actor, err)
			return exitTempFail
		} else if ok {
			removed++
		}
	}
	fmt.Fprintf(e.stdout, "removed %d subscribers\n", removed)
	return exitOK
}

// confirm asks question and reports whether the answer is "yes".
func confirm(e *env, question string) bool {
	fmt.Fprint(e.stdout, question)
	if e.stdin == nil {
		return false
	}
	line, _ := bufio.NewReader(e.stdin).ReadString('\n')
	return strings.TrimSpace(line) == "yes"
}

const hostsUsage = `usage:
  relay [-c FILE] hosts available host

The operator's clear: host (host[:port], as in its inbox URL) is marked
available, so deliveries to it are sent again. Needs REDIS_URL or
POSTGRES_URL, where the server keeps host availability.
`

// runHosts runs `relay hosts available HOST`.
func runHosts(ctx context.Context, a *args, e *env) int {
	if len(a.words) != 3 || a.words[1] != "available" || a.remove || a.yes || a.strict || a.ackExt {
		fmt.Fprint(e.stderr, hostsUsage)
		return exitUsage
	}
	host := strings.ToLower(a.words[2])
	cfg, code := loadConfig(a, e, false)
	if cfg == nil {
		return code
	}
	ap, err := openApp(ctx, cfg, e, false)
	if err != nil {
		fmt.Fprintf(e.stderr, "relay: %v\n", err)
		return exitFailed
	}
	defer ap.close()
	if ap.availName == "memory" {
		fmt.Fprintf(e.stderr, "relay: no shared availability store: configure REDIS_URL or POSTGRES_URL (without them the server keeps it in its own memory)\n")
		return exitConfig
	}
	if err := ap.avail.SeenAlive(ctx, host); err != nil {
		fmt.Fprintf(e.stderr, "relay: availability store: %v\n", err)
		return exitTempFail
	}
	fmt.Fprintf(e.stdout, "%s is available: deliveries to it resume\n", host)
	return exitOK
}
