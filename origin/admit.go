package origin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Resolution is what one fresh, uncached resolution of a DID found. The
// identity package supplies it; origin only judges it.
type Resolution struct {
	// DID is the id of the DID document that was fetched.
	DID string
	// Handle is the handle the document declares in alsoKnownAs ("at://"
	// stripped), or "" when it declares none.
	Handle string
	// PDS is the document's #atproto_pds service endpoint URL, or "".
	PDS string
	// HandleDID is the DID that Handle resolved to, freshly, through DNS TXT
	// or HTTPS well-known; "" when it did not resolve.
	HandleDID string
}

// Resolver resolves a DID for admission. Implementations must bypass every
// cache: a cached answer can still name the bridge after a repository has
// moved. The identity package's uncached resolver satisfies it.
//
// An error wrapping ErrUnresolvable means the DID cannot be resolved for a
// lasting reason (it does not exist, or its document is invalid); any other
// error is treated as transient.
type Resolver interface {
	// ResolveFresh resolves did and its handle now, with no cache.
	ResolveFresh(ctx context.Context, did string) (Resolution, error)
}

// ErrUnresolvable is wrapped by Resolver errors that will not go away by
// retrying.
var ErrUnresolvable = errors.New("origin: DID cannot be resolved")

// Outcome is what to do with a profile event after admission.
type Outcome uint8

// Outcomes of Admit.
const (
	// OutcomeAdmit: store the Decision's Write and apply the rest of the event.
	OutcomeAdmit Outcome = iota + 1
	// OutcomeClear: the row exists; clear its origin fields (Write holds "")
	// and apply the rest of the event. Not redriven.
	OutcomeClear
	// OutcomeDrop: the row does not exist; drop the event without creating
	// one. Not redriven.
	OutcomeDrop
	// OutcomeRetry: write nothing and redrive the event later (a transient
	// failure, or a handle not verified yet).
	OutcomeRetry
)

// String returns the outcome's name.
func (o Outcome) String() string {
	switch o {
	case OutcomeAdmit:
		return "admit"
	case OutcomeClear:
		return "clear"
	case OutcomeDrop:
		return "drop"
	case OutcomeRetry:
		return "retry"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// Reason is a closed code explaining a Decision, safe to log.
type Reason string

// Reasons carried by Decision and ClearOnRefresh.
const (
	ReasonAdmitted             Reason = "admitted"
	ReasonNotAsserted          Reason = "not-asserted"
	ReasonNothingValid         Reason = "nothing-valid"
	ReasonUnresolvable         Reason = "did-unresolvable"
	ReasonTransient            Reason = "resolution-failed"
	ReasonSubjectMismatch      Reason = "subject-mismatch"
	ReasonUntrustedPDS         Reason = "pds-untrusted"
	ReasonHandleUnverified     Reason = "handle-unverified"
	ReasonHandleDomainMismatch Reason = "handle-domain-mismatch"
	ReasonAccountInactive      Reason = "account-inactive"
	// ReasonResolveTimeout: the fresh resolution ran out of
	// AdmitConfig.ResolveTimeout while the caller's context was live.
	ReasonResolveTimeout Reason = "resolve-timeout"
)

// Write says what to store in the four origin columns. A nil field leaves
// its column untouched: NULL on a new row, the stored value on an existing
// one (SQL: col = COALESCE($n, col)). A pointer to "" clears the column, so
// a clear stays visible; filter cleared and absent values alike with:
//
//	COALESCE(col, '') <> ''
type Write struct {
	// Origin is the origin domain column.
	Origin *string
	// Username is the origin username column.
	Username *string
	// URL is the profile URL column.
	URL *string
	// Software is the software column.
	Software *string
}

// IsZero reports whether w touches no column.
func (w Write) IsZero() bool { return w == Write{} }

// ClearAll returns a Write that clears every origin column.
func ClearAll() Write {
	e := func() *string { s := ""; return &s }
	return Write{Origin: e(), Username: e(), URL: e(), Software: e()}
}

func writeOf(f Fields) Write {
	p := func(s string) *string { return &s }
	return Write{Origin: p(f.Origin), Username: p(f.Username), URL: p(f.URL), Software: p(f.Software)}
}

// Event is a profile event as Admit needs it.
type Event struct {
	// DID is the repository the profile record belongs to.
	DID string
	// Fields are the origin fields as the record asserts them, unsanitised.
	Fields Fields
	// Known says whether the application already has a row for DID.
	Known bool
}

// Decision is the result of Admit.
type Decision struct {
	// Outcome says what the application does with the event.
	Outcome Outcome
	// Write is what to store for OutcomeAdmit and OutcomeClear; zero otherwise.
	Write Write
	// Reason explains the outcome.
	Reason Reason
	// Rejected lists asserted fields that Sanitize dropped.
	Rejected []Rejection
	// Err is the transient cause of OutcomeRetry.
	Err error
	// Resolution is the fresh resolution of the right DID the decision was
	// made on; nil when Admit resolved nothing (no field asserted) or the
	// resolution failed. An application creating a row for a new DID takes
	// its PDS and handle from here rather than resolving a second time.
	Resolution *Resolution
}

// ResolveTimeoutDefault bounds one fresh resolution, every leg included:
// the bound identity's refresh puts on the same PLC server.
const ResolveTimeoutDefault = 5 * time.Second

// AdmitConfig configures an Admitter. A nil *AdmitConfig means defaults,
// which trust no host and so admit nothing.
type AdmitConfig struct {
	// TrustedHosts are the bridge PDS hosts ("pds.tdpl.io", or a URL such as
	// "https://pds.tdpl.io"). Defaults to none.
	TrustedHosts []string
	// Logger receives one line per event whose asserted fields were not
	// stored or were cleared (DID and reason only). Defaults to discarding.
	Logger *slog.Logger
	// ResolveTimeout bounds each fresh resolution Admit and AdmitCommunity
	// make, so a PLC server that never answers, or trickles, holds the
	// caller's lane no longer. Defaults to ResolveTimeoutDefault.
	ResolveTimeout time.Duration
}

// Admitter decides whether a profile event's origin fields are admitted.
// It is safe for concurrent use.
type Admitter struct {
	res     Resolver
	trusted TrustedHosts
	log     *slog.Logger
	timeout time.Duration
}

// NewAdmitter returns an Admitter resolving through res, which must be
// uncached. It fails if res is nil or a trusted host is malformed.
func NewAdmitter(res Resolver, cfg *AdmitConfig) (*Admitter, error) {
	if res == nil {
		return nil, errors.New("origin: NewAdmitter: nil Resolver")
	}
	if cfg == nil {
		cfg = &AdmitConfig{}
	}
	th, err := NewTrustedHosts(cfg.TrustedHosts)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	timeout := cfg.ResolveTimeout
	switch {
	case timeout < 0:
		return nil, errors.New("origin: NewAdmitter: negative ResolveTimeout")
	case timeout == 0:
		timeout = ResolveTimeoutDefault
	}
	return &Admitter{res: res, trusted: th, log: log, timeout: timeout}, nil
}

// resolve resolves did fresh under the Admitter's ResolveTimeout. On failure
// it returns the reason: ReasonUnresolvable for a lasting failure seen
// within the bound, ReasonResolveTimeout when the bound ran out while ctx
// was live, ReasonTransient otherwise.
func (a *Admitter) resolve(ctx context.Context, did string) (Resolution, Reason, error) {
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	res, err := a.res.ResolveFresh(rctx, did)
	switch {
	case err == nil:
		return res, "", nil
	case errors.Is(err, ErrUnresolvable) && rctx.Err() == nil:
		return Resolution{}, ReasonUnresolvable, err
	case ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded):
		return Resolution{}, ReasonResolveTimeout, fmt.Errorf("origin: resolving %s: %w", did, errors.Join(err, context.DeadlineExceeded))
	}
	return Resolution{}, ReasonTransient, fmt.Errorf("origin: resolving %s: %w", did, err)
}

// Admit decides, for the event being processed, whether its origin fields
// are admitted. It resolves the DID fresh (never from a stored PDS URL or a
// cache) and admits the sanitised fields only when all of these hold:
//
//  1. the DID document names a PDS whose host is trusted;
//  2. the declared handle's registrable domain equals that PDS host's;
//  3. the handle resolves back to the same DID (verified both ways).
//
// A record asserting no field, or none that survives Sanitize, needs no
// resolution: a known row is cleared, a new one is left untouched (NULL).
// A failed admission clears a known row and drops an unknown one's event; a
// transient failure or an unverified handle asks for a retry.
func (a *Admitter) Admit(ctx context.Context, ev Event) Decision {
	clean, rej := Sanitize(ev.Fields)
	if ev.Fields.IsZero() || clean.IsZero() {
		reason := ReasonNotAsserted
		if !ev.Fields.IsZero() {
			reason = ReasonNothingValid
		}
		if ev.Known {
			return a.logged(ev, Decision{Outcome: OutcomeClear, Write: ClearAll(), Reason: reason, Rejected: rej})
		}
		if ev.Fields.IsZero() {
			return Decision{Outcome: OutcomeAdmit, Reason: reason}
		}
		return a.logged(ev, Decision{Outcome: OutcomeAdmit, Write: ClearAll(), Reason: reason, Rejected: rej})
	}

	res, reason, err := a.resolve(ctx, ev.DID)
	switch {
	case reason == ReasonUnresolvable:
		return a.refuse(ev, reason, rej)
	case err != nil:
		return a.logged(ev, Decision{Outcome: OutcomeRetry, Reason: reason, Rejected: rej, Err: err})
	}
	if res.DID != ev.DID {
		return a.refuse(ev, ReasonSubjectMismatch, rej)
	}
	if r := a.judge(res); r != "" {
		if r == ReasonHandleUnverified {
			return a.logged(ev, Decision{Outcome: OutcomeRetry, Reason: r, Rejected: rej, Resolution: &res})
		}
		return a.refuse(ev, r, rej)
	}
	d := Decision{Outcome: OutcomeAdmit, Write: writeOf(clean), Reason: ReasonAdmitted, Rejected: rej, Resolution: &res}
	if len(rej) > 0 {
		return a.logged(ev, d)
	}
	return d
}

// judge applies the trust rules to a resolution of the right DID and
// returns "" when they all hold.
func (a *Admitter) judge(res Resolution) Reason {
	if !a.trusted.Contains(res.PDS) {
		return ReasonUntrustedPDS
	}
	// Tolerate an implementation that left alsoKnownAs's "at://" on.
	h := strings.TrimSuffix(strings.ToLower(strings.TrimPrefix(res.Handle, "at://")), ".")
	if h == "" || h == "handle.invalid" {
		return ReasonHandleUnverified
	}
	hd, err := RegistrableDomain(h)
	if err != nil {
		return ReasonHandleDomainMismatch
	}
	pd, err := RegistrableDomain(res.PDS)
	if err != nil || pd != hd {
		return ReasonHandleDomainMismatch
	}
	if res.HandleDID != res.DID {
		return ReasonHandleUnverified
	}
	return ""
}

func (a *Admitter) refuse(ev Event, r Reason, rej []Rejection) Decision {
	if ev.Known {
		return a.logged(ev, Decision{Outcome: OutcomeClear, Write: ClearAll(), Reason: r, Rejected: rej})
	}
	return a.logged(ev, Decision{Outcome: OutcomeDrop, Reason: r, Rejected: rej})
}

func (a *Admitter) logged(ev Event, d Decision) Decision {
	if !ev.Fields.IsZero() {
		a.log.Info("origin fields not admitted as asserted", "did", ev.DID, "outcome", d.Outcome.String(), "reason", string(d.Reason))
	}
	return d
}

// ClearOnRefresh reports whether a row's origin fields must be cleared
// (with ClearAll) after an identity refresh resolved its DID fresh: the
// DID's PDS is no longer trusted, or its handle's registrable domain no
// longer matches the PDS's. Stored fields are then cleared at once rather
// than at the next profile event. A resolution of another DID, or one
// whose handle is merely unverified, clears nothing: that is the
// refresher's business.
func (a *Admitter) ClearOnRefresh(res Resolution) (bool, Reason) {
	if !a.trusted.Contains(res.PDS) {
		return true, ReasonUntrustedPDS
	}
	if r := a.judge(res); r == ReasonHandleDomainMismatch {
		return true, r
	}
	return false, ""
}

// ClearOnAccountStatus reports whether an account event with this status
// clears the row's origin fields: "deleted" and "takendown" do.
func ClearOnAccountStatus(status string) bool {
	return status == "deleted" || status == "takendown"
}

// TrustedHosts is a deny-by-default set of bridge PDS hosts. The zero value
// trusts nothing.
type TrustedHosts struct {
	set map[string]struct{}
}

// NewTrustedHosts normalises hosts (scheme and host lower-cased, default
// ports removed, schemeless values taken as https) into a set. Empty
// entries are skipped; a malformed one is an error.
func NewTrustedHosts(hosts []string) (TrustedHosts, error) {
	t := TrustedHosts{set: make(map[string]struct{}, len(hosts))}
	for _, h := range hosts {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		k, ok := hostKey(h)
		if !ok {
			return TrustedHosts{}, fmt.Errorf("%w: trusted host %q", ErrInvalidURL, h)
		}
		t.set[k] = struct{}{}
	}
	return t, nil
}

// Contains reports whether the PDS URL's host (with any non-default port)
// is trusted. An empty or unparsable URL is never trusted.
func (t TrustedHosts) Contains(pds string) bool {
	if len(t.set) == 0 || pds == "" {
		return false
	}
	k, ok := hostKey(pds)
	if !ok {
		return false
	}
	_, in := t.set[k]
	return in
}

// hostKey normalises a URL or a schemeless host[:port] to host[:port],
// dropping the scheme's default port.
func hostKey(s string) (string, bool) {
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.User != nil {
		return "", false
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	o, err := OfURL(u)
	if err != nil {
		return "", false
	}
	if o.Port != "" {
		return o.Host + ":" + o.Port, true
	}
	return o.Host, true
}
