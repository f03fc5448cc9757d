package relay

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fedkit/fedkit/deliver"
)

// Breaker states as the status page shows them.
const (
	BreakerClosed  = "closed"
	BreakerOpen    = "open"
	BreakerProbing = "probing"
)

// Health bounds.
const (
	RecentFailuresPerHost = 5
	RecentFailures        = 50
	MaxHosts              = 10_000
)

// Failure is one failed or held delivery attempt.
type Failure struct {
	At      time.Time `json:"at"`
	Host    string    `json:"host"`
	Inbox   string    `json:"inbox"`
	Status  int       `json:"status,omitempty"`
	Kind    string    `json:"kind"` // the attempt's outcome: failed, refused or held
	Attempt int       `json:"attempt"`
}

// HostHealth is what this process saw of deliveries to one host. Its
// Breaker and OpenUntil are this process's mirror of the breaker; the
// status page's Breakers, read from the store, are what deliveries obey.
type HostHealth struct {
	Host                string    `json:"host"`
	Breaker             string    `json:"breaker"`
	OpenUntil           time.Time `json:"open_until,omitzero"`
	ConsecutiveFailures int       `json:"consecutive_failures"`
	Delivered           int64     `json:"delivered"`
	Failed              int64     `json:"failed"`
	Held                int64     `json:"held"`
	LastSuccess         time.Time `json:"last_success,omitzero"`
	LastFailure         time.Time `json:"last_failure,omitzero"`
	Recent              []Failure `json:"recent_failures"`
}

// Health keeps per-host delivery health from the deliverer's OnAttempt hook.
// The deliverer's BreakerStore decides; Health mirrors what it decided, as
// seen by this process, for the status page.
type Health struct {
	threshold int

	timeline Timeline // has its own lock

	mu     sync.Mutex
	hosts  map[string]*HostHealth
	recent []Failure
}

// NewHealth returns a tracker; threshold is the breaker's (0: the default).
func NewHealth(threshold int) *Health {
	if threshold <= 0 {
		threshold = deliver.BreakerThresholdDefault
	}
	return &Health{threshold: threshold, hosts: map[string]*HostHealth{}}
}

// OnAttempt is the deliverer hook.
func (h *Health) OnAttempt(_ context.Context, a deliver.Attempt) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hh := h.hosts[a.Host]
	if hh == nil {
		if len(h.hosts) >= MaxHosts {
			h.evictLocked()
		}
		hh = &HostHealth{Host: a.Host, Breaker: BreakerClosed, Recent: []Failure{}}
		h.hosts[a.Host] = hh
	}
	now := time.Now()
	h.timeline.Record(now, a.Outcome)
	switch a.Outcome {
	case deliver.AttemptDelivered:
		hh.Delivered++
		hh.ConsecutiveFailures = 0
		hh.LastSuccess = now
		hh.Breaker, hh.OpenUntil = BreakerClosed, time.Time{}
		return
	case deliver.AttemptHeld:
		hh.Held++
		hh.Breaker = BreakerOpen
		var de *deliver.DeliveryError
		if errors.As(a.Err, &de) && !de.Until.IsZero() {
			hh.OpenUntil = de.Until
		}
	default:
		hh.Failed++
		hh.ConsecutiveFailures++
		hh.LastFailure = now
		switch {
		case a.Probe || hh.ConsecutiveFailures >= h.threshold:
			hh.Breaker = BreakerOpen
		case hh.Breaker == BreakerOpen:
			hh.Breaker = BreakerProbing
		}
	}
	f := Failure{At: now, Host: a.Host, Inbox: a.Inbox, Status: a.StatusCode, Attempt: a.Number, Kind: a.Outcome.String()}
	hh.Recent = append(hh.Recent, f)
	if len(hh.Recent) > RecentFailuresPerHost {
		hh.Recent = slices.Delete(hh.Recent, 0, len(hh.Recent)-RecentFailuresPerHost)
	}
	h.recent = append(h.recent, f)
	if len(h.recent) > RecentFailures {
		h.recent = slices.Delete(h.recent, 0, len(h.recent)-RecentFailures)
	}
}

// evictLocked forgets healthy hosts, keeping those a reader needs to see.
func (h *Health) evictLocked() {
	for k, v := range h.hosts {
		if v.Breaker == BreakerClosed && v.ConsecutiveFailures == 0 {
			delete(h.hosts, k)
		}
	}
	if len(h.hosts) >= MaxHosts {
		clear(h.hosts)
	}
}

// Snapshot returns every tracked host, unhealthiest first, and the recent
// failures, newest first.
func (h *Health) Snapshot() ([]HostHealth, []Failure) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hosts := make([]HostHealth, 0, len(h.hosts))
	for _, v := range h.hosts {
		c := *v
		c.Recent = slices.Clone(v.Recent)
		slices.Reverse(c.Recent)
		hosts = append(hosts, c)
	}
	rank := map[string]int{BreakerOpen: 0, BreakerProbing: 1, BreakerClosed: 2}
	slices.SortFunc(hosts, func(a, b HostHealth) int {
		if d := rank[a.Breaker] - rank[b.Breaker]; d != 0 {
			return d
		}
		if d := b.ConsecutiveFailures - a.ConsecutiveFailures; d != 0 {
			return d
		}
		return strings.Compare(a.Host, b.Host)
	})
	recent := append([]Failure{}, h.recent...) // [] rather than null in JSON
	slices.Reverse(recent)
	return hosts, recent
}
