package relay

import (
	"context"
	"crypto/subtle"
	_ "embed"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/examples/relay/internal/store"
)

// QueueDepth counts queued deliveries (claimed or not) per lane.
type QueueDepth struct {
	Backend  string `json:"backend"`
	Priority int    `json:"priority"`
	Normal   int    `json:"normal"`
	Low      int    `json:"low"`
}

// Total sums the lanes.
func (q QueueDepth) Total() int { return q.Priority + q.Normal + q.Low }

// DirectoryRow is one configured Directory's local state.
type DirectoryRow struct {
	Origin        string    `json:"origin"`
	Enabled       bool      `json:"enabled"`
	State         string    `json:"state"`
	LastSuccess   time.Time `json:"last_success,omitzero"`
	NextHeartbeat time.Time `json:"next_heartbeat,omitzero"`
	RetryAt       time.Time `json:"retry_at,omitzero"`
	Code          string    `json:"code,omitempty"`
	Diagnostic    string    `json:"diagnostic,omitempty"`
}

// StatusSource supplies the status page's sections the relay does not own.
type StatusSource interface {
	QueueDepth(ctx context.Context) (QueueDepth, error)
	Directories(ctx context.Context) ([]DirectoryRow, error)
}

// BreakerLights reads the deliverer's breaker store: the state every
// process sharing the store acts on, not what one process saw. A
// redisbreaker.Store is one; MemoryLights reads a
// *deliver.MemoryBreakerStore.
type BreakerLights interface {
	Lights(ctx context.Context) ([]driver.BreakerLight, error)
}

// MemoryLights reads a *deliver.MemoryBreakerStore, which cannot fail, as
// BreakerLights.
type MemoryLights struct{ Store *deliver.MemoryBreakerStore }

// Lights implements BreakerLights.
func (m MemoryLights) Lights(context.Context) ([]driver.BreakerLight, error) {
	return m.Store.Lights(), nil
}

// BreakerRow is one light from the breaker store: a host (or an inbox URL
// with per-inbox breakers) that has failed since its last success.
type BreakerRow struct {
	Light string `json:"light"`
	// State is BreakerOpen (holding every delivery), BreakerProbing (past
	// its cool-off: one delivery at a time goes) or BreakerClosed (failing,
	// under the threshold).
	State string `json:"state"`
	// Failures counts failures in a row while closed; the store restarts it
	// at zero when the light opens.
	Failures     int       `json:"failures"`
	LastFailure  time.Time `json:"last_failure,omitzero"`
	OpenUntil    time.Time `json:"open_until,omitzero"`
	ProbeStarted time.Time `json:"probe_started,omitzero"`
}

// breakerState names a light's state at now; BreakerLight.Color is the one
// definition of it, for both stores.
func breakerState(l driver.BreakerLight, now time.Time) string {
	switch l.Color(now) {
	case driver.LightRed:
		return BreakerOpen
	case driver.LightYellow:
		return BreakerProbing
	default:
		return BreakerClosed
	}
}

// breakerRows reads the store's lights, open ones first.
func breakerRows(ctx context.Context, b BreakerLights, now time.Time) ([]BreakerRow, error) {
	lights, err := b.Lights(ctx)
	if err != nil {
		return nil, err
	}
	rows := make([]BreakerRow, 0, len(lights))
	for _, l := range lights {
		rows = append(rows, BreakerRow{Light: l.Name, State: breakerState(l, now), Failures: l.Failures,
			LastFailure: l.LastFailure, OpenUntil: l.OpenUntil, ProbeStarted: l.ProbeStarted})
	}
	rank := map[string]int{BreakerOpen: 0, BreakerProbing: 1, BreakerClosed: 2}
	slices.SortStableFunc(rows, func(a, b BreakerRow) int { return rank[a.State] - rank[b.State] })
	return rows, nil
}

// Report is the status page, as HTML and as JSON.
type Report struct {
	GeneratedAt    time.Time          `json:"generated_at"`
	Actor          string             `json:"actor"`
	Version        string             `json:"version"`
	ManualApproval bool               `json:"manual_approval"`
	Active         int                `json:"active_subscribers"`
	Pending        int                `json:"pending_subscribers"`
	Subscribers    []store.Subscriber `json:"subscribers"`
	Queue          *QueueDepth        `json:"queue,omitempty"`
	// BreakerStore names where Breakers were read ("memory", "redis");
	// empty when the relay was given no store to read.
	BreakerStore string       `json:"breaker_store,omitempty"`
	Breakers     []BreakerRow `json:"breakers"`
	// Unavailable lists the hosts deliveries are skipped for (the
	// availability store's, shared when it is).
	Unavailable []UnavailableRow `json:"unavailable"`
	// Hosts and RecentFailures are what this process's deliveries saw.
	Hosts          []HostHealth   `json:"hosts"`
	RecentFailures []Failure      `json:"recent_failures"`
	Directories    []DirectoryRow `json:"directories"`
	// DeliveriesPerMinute is the last hour of this process's delivery
	// attempts, oldest minute first, counted from the deliverer's
	// OnAttempt hook: delivered, failed and held (by an open breaker).
	DeliveriesPerMinute []MinuteCount `json:"deliveries_per_minute"`
	Errors              []string      `json:"errors,omitempty"`
}

// Report builds the status report; a failing section is noted in Errors.
func (r *Relay) Report(ctx context.Context) *Report {
	rep := &Report{GeneratedAt: r.cfg.Now().UTC(), Actor: r.actor, Version: Version, ManualApproval: r.cfg.ManualApproval,
		Subscribers: []store.Subscriber{}, Breakers: []BreakerRow{}, Directories: []DirectoryRow{}, Unavailable: []UnavailableRow{}}
	if subs, err := r.cfg.Store.List(ctx); err != nil {
		rep.Errors = append(rep.Errors, "subscribers: store unavailable")
	} else {
		rep.Subscribers = subs
		for _, s := range subs {
			if s.State == store.StateActive {
				rep.Active++
			} else {
				rep.Pending++
			}
		}
	}
	if r.cfg.Breakers != nil {
		rep.BreakerStore = r.cfg.BreakerStore
		if rows, err := breakerRows(ctx, r.cfg.Breakers, rep.GeneratedAt); err != nil {
			rep.Errors = append(rep.Errors, "breakers: store unavailable")
		} else {
			rep.Breakers = rows
		}
	}
	if r.cfg.Availability != nil {
		if rows, err := unavailableRows(ctx, r.cfg.Availability, rep.Subscribers); err != nil {
			rep.Errors = append(rep.Errors, "availability: store unavailable")
		} else {
			rep.Unavailable = rows
		}
	}
	rep.Hosts, rep.RecentFailures = r.cfg.Health.Snapshot()
	rep.DeliveriesPerMinute = r.cfg.Health.PerMinute(rep.GeneratedAt)
	if r.cfg.Status != nil {
		if q, err := r.cfg.Status.QueueDepth(ctx); err != nil {
			rep.Errors = append(rep.Errors, "queue: unavailable")
		} else {
			rep.Queue = &q
		}
		if d, err := r.cfg.Status.Directories(ctx); err != nil {
			rep.Errors = append(rep.Errors, "directories: state unavailable")
		} else if d != nil {
			rep.Directories = d
		}
	}
	return rep
}

// admin guards h with the admin token: "Authorization: Bearer TOKEN", or a
// token query or form value (so a browser can open the page from a link).
func (r *Relay) admin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		// The token may be in the URL: keep it out of Referer headers.
		w.Header().Set("Referrer-Policy", "no-referrer")
		if r.cfg.AdminToken == "" {
			http.Error(w, "admin pages are disabled", http.StatusNotFound)
			return
		}
		tok := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
		if tok == "" || tok == req.Header.Get("Authorization") {
			tok = req.FormValue("token")
		}
		if subtle.ConstantTimeCompare([]byte(tok), []byte(r.cfg.AdminToken)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="relay admin"`)
			http.Error(w, "admin token required", http.StatusUnauthorized)
			return
		}
		h(w, req)
	}
}

func (r *Relay) serveStatusJSON(w http.ResponseWriter, req *http.Request) {
	writeJSON(w, http.StatusOK, "application/json", r.Report(req.Context()))
}

//go:embed status.html
var statusHTML string

var statusTmpl = template.Must(template.New("status").Funcs(template.FuncMap{
	"ago": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
}).Parse(statusHTML))

func (r *Relay) serveStatus(w http.ResponseWriter, req *http.Request) {
	if strings.Contains(req.Header.Get("Accept"), "application/json") {
		r.serveStatusJSON(w, req)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	rep := r.Report(req.Context())
	_ = statusTmpl.Execute(w, struct {
		*Report
		Token string
		Chart *DeliveryChart
	}{rep, req.FormValue("token"), NewDeliveryChart(rep.DeliveriesPerMinute)})
}

func (r *Relay) serveApprove(w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	sub, ok, err := r.cfg.Store.Get(ctx, req.FormValue("actor"))
	switch {
	case err != nil:
		http.Error(w, "store unavailable", http.StatusServiceUnavailable)
		return
	case !ok:
		http.Error(w, "no such subscriber", http.StatusNotFound)
		return
	}
	if sub.State != store.StateActive {
		sub.State = store.StateActive
		sub.Since = r.cfg.Now().UTC()
		if err := r.cfg.Store.Put(ctx, sub); err != nil {
			http.Error(w, "store unavailable", http.StatusServiceUnavailable)
			return
		}
		if err := r.sendAccept(ctx, sub); err != nil {
			http.Error(w, "queue unavailable", http.StatusServiceUnavailable)
			return
		}
	}
	r.backToStatus(w, req)
}

func (r *Relay) serveRemove(w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	sub, ok, err := r.cfg.Store.Get(ctx, req.FormValue("actor"))
	if err != nil {
		http.Error(w, "store unavailable", http.StatusServiceUnavailable)
		return
	}
	if ok {
		if _, err := r.cfg.Store.Delete(ctx, sub.Actor); err != nil {
			http.Error(w, "store unavailable", http.StatusServiceUnavailable)
			return
		}
		// Tell the server, so it stops sending; a pending one is rejected.
		_ = r.sendResponse(ctx, sub, "Reject")
		_ = r.endFollowBack(ctx, sub)
	}
	r.backToStatus(w, req)
}

func (r *Relay) backToStatus(w http.ResponseWriter, req *http.Request) {
	if strings.Contains(req.Header.Get("Accept"), "application/json") {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	http.Redirect(w, req, "/admin/status?token="+template.URLQueryEscaper(req.FormValue("token")), http.StatusSeeOther)
}
