package relay

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/examples/relay/internal/store"
)

// RemovalAfterDefault is how long a subscriber's host must have been
// unavailable before `relay subscribers unavailable` offers to remove it.
const RemovalAfterDefault = 30 * 24 * time.Hour

// Availability is the deliverer's availability store, as the relay uses
// it: read for the status page, and told of every server whose signed
// activity arrives, so a host marked unavailable gets deliveries again.
// Every driver.AvailabilityStore is one.
type Availability interface {
	ListUnavailable(ctx context.Context) ([]driver.UnavailableHost, error)
	SeenAlive(ctx context.Context, host string) error
}

var _ Availability = driver.AvailabilityStore(nil)

// UnavailableRow is a host deliveries are skipped for, on the status page.
type UnavailableRow struct {
	Host  string    `json:"host"`
	Since time.Time `json:"since"`
	// Subscribers counts the subscribers whose inbox is on Host.
	Subscribers int `json:"subscribers"`
}

// InboxHost is the host deliveries to s are keyed by (the deliverer's and
// the availability store's key): its inbox's host[:port], lower case.
func InboxHost(s store.Subscriber) string {
	u, err := url.Parse(s.Inbox)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}

// RemovalCandidates returns the subscribers whose inbox's host has been
// unavailable for at least after at now.
func RemovalCandidates(subs []store.Subscriber, down []driver.UnavailableHost, now time.Time, after time.Duration) []store.Subscriber {
	since := make(map[string]time.Time, len(down))
	for _, u := range down {
		since[u.Host] = u.Since
	}
	var out []store.Subscriber
	for _, s := range subs {
		if t, ok := since[InboxHost(s)]; ok && now.Sub(t) >= after {
			out = append(out, s)
		}
	}
	return out
}

func unavailableRows(ctx context.Context, a Availability, subs []store.Subscriber) ([]UnavailableRow, error) {
	down, err := a.ListUnavailable(ctx)
	if err != nil {
		return nil, err
	}
	count := map[string]int{}
	for _, s := range subs {
		count[InboxHost(s)]++
	}
	rows := make([]UnavailableRow, 0, len(down))
	for _, u := range down {
		rows = append(rows, UnavailableRow{Host: u.Host, Since: u.Since, Subscribers: count[u.Host]})
	}
	return rows, nil
}

// seenAlive tells the availability store that host sent a signed
// activity. Its failure is logged: it must not refuse the activity.
func (r *Relay) seenAlive(ctx context.Context, host string) {
	if r.cfg.Availability == nil {
		return
	}
	if err := r.cfg.Availability.SeenAlive(ctx, host); err != nil {
		r.log.WarnContext(ctx, "availability store failed", "host", host, "err", err)
	}
}
