package identity

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/fedkit/fedkit/origin"
)

// Kind says which application table a Subject lives in.
type Kind uint8

const (
	// KindUser is an account row.
	KindUser Kind = iota + 1
	// KindCommunity is a community row: its handle changes also pass
	// CommunityHooks.
	KindCommunity
)

// MarshalText implements encoding.TextMarshaler ("user", "community").
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case KindUser:
		return "user"
	case KindCommunity:
		return "community"
	}
	return "unknown"
}

// Subject is the application's row for a DID, as the Refresher needs it.
type Subject struct {
	// DID is the row's DID.
	DID DID
	// Kind says whether the row is a user or a community.
	Kind   Kind
	Handle Handle // the stored handle; zero if none
	// PDS is the stored PDS URL. The Refresher never trusts it; Sweep
	// uses it only to pick the rows to check.
	PDS string
	// HostedBy is a community's stored hosted-by DID, for CommunityHooks.
	HostedBy DID
	// HasOrigin reports that the row holds a non-empty origin field, so a
	// DID seen off the bridge needs clearing.
	HasOrigin bool
	// Origin is a community's stored origin domain, or "" when the
	// application does not supply it (users' is not read). With it, a
	// community that resolves off the bridge keeps an origin the spec 4.4
	// own-domain rule allows its verified handle and loses any other; without
	// it, the community's origin is cleared only when its stored PDS is a
	// trusted host (a native community's own-domain origin cannot be told
	// from a foreign one, so it is kept).
	Origin string
}

// Store is the application's table access. Subject must be one indexed read:
// the firehose carries the identity events of the whole network.
type Store interface {
	// Subject returns did's row, or an error matching ErrUnknownDID.
	Subject(ctx context.Context, did DID) (Subject, error)
	// SetHandle writes h as s's handle; a unique conflict is ErrHandleTaken.
	// It runs inside the per-DID lock, so copies of the handle (OAuth
	// sessions, denormalised columns) are best updated here too.
	SetHandle(ctx context.Context, s Subject, h Handle) error
	// ClearOrigin stores w, which is origin.ClearAll(): every origin column
	// becomes "" (a visible clear), never NULL.
	ClearOrigin(ctx context.Context, s Subject, w origin.Write) error
}

// HandleHolder is optionally implemented by a Store. With it, a refresh
// whose verified handle another row still holds (the incumbent, whose own
// identity event has not come yet) refreshes the incumbent through the same
// locked flow, after releasing its own lock, and tries once more, rather
// than waiting for a redrive (spec 5.4). Without it, or when the incumbent
// does not let go, the refresh fails with ReasonHandleTaken.
type HandleHolder interface {
	// HolderOf returns the row whose stored handle is h, or an error
	// matching ErrUnknownDID when no row holds it.
	HolderOf(ctx context.Context, h Handle) (Subject, error)
}

// CommunityHooks are the application's extra checks on a community's new handle.
type CommunityHooks interface {
	// ValidateHandle refuses a handle the application does not allow for
	// communities; any error is permanent and keeps the old handle.
	ValidateHandle(h Handle) error
	// CheckHostedBy re-checks s's hosted-by claim against id. An error
	// matching ErrHostedByMismatch is permanent and keeps the old handle;
	// any other error is unresolved.
	CheckHostedBy(ctx context.Context, s Subject, id *Identity) error
}

// Defaults for RefresherConfig.
const (
	ResolveTimeoutDefault = 5 * time.Second // identityResolveTimeout
)

// RefresherConfig configures a Refresher.
type RefresherConfig struct {
	// Cache is the caching resolver (or any Purger) whose entries a
	// refresh purges. Defaults to none.
	Cache Purger
	// Lock serialises refreshes per DID. Required at refresh time: a nil
	// Lock or one with a non-positive Wait fails every refresh closed with
	// ErrLockUnavailable before anything is purged. Defaults to nil.
	Lock Lock
	// Community checks community handles. Defaults to nil, which refuses
	// (permanently) every community handle change.
	Community CommunityHooks
	// TrustedHosts are the bridge PDS hosts. A refresh that finds a row
	// with origin fields whose DID is no longer on a trusted PDS under its
	// handle's registrable domain clears the fields. Defaults to none
	// (deny by default: every origin field is cleared on refresh).
	TrustedHosts []string
	// ResolveTimeout bounds one uncached resolution, every leg included.
	// Defaults to ResolveTimeoutDefault.
	ResolveTimeout time.Duration
	// DebounceTTL is how long a resolution that hit its deadline
	// suppresses the next ones. Defaults to DebounceTTLDefault.
	DebounceTTL time.Duration
	// DebounceMaxEntries caps the debounce. Defaults to DebounceMaxEntriesDefault.
	DebounceMaxEntries int
	// Now is the clock for the debounce. Defaults to time.Now. The resolver
	// and Cache handed to the Refresher take it when they have no Now of
	// their own.
	Now func() time.Time
	// Logger receives one line per refresh outcome at debug level.
	// Defaults to discarding.
	Logger *slog.Logger
	// TracerProvider receives an identity.refresh span per refresh
	// (package doc, "Telemetry"). Defaults to OTel's global provider, a
	// no-op until the application installs one.
	TracerProvider trace.TracerProvider
	// MeterProvider receives the fedkit.identity.refreshes counter.
	// Defaults to OTel's global provider.
	MeterProvider metric.MeterProvider
}

// Refresher keeps stored handles current: the identity-event path, the
// per-DID locked refresh and the reconciliation sweep.
type Refresher struct {
	resolver Resolver
	store    Store
	cfg      RefresherConfig
	fresh    origin.Resolver // the uncached resolver, for sweep policies
	bridge   *bridgePolicy
	debounce *debounce
	tel      refreshTelemetry
}

// bridgePolicy is the trusted bridge list a refresh judges origin fields
// by: the Refresher's, or a Sweep's TrustedHosts.
type bridgePolicy struct {
	trusted  origin.TrustedHosts
	admitter *origin.Admitter // only its ClearOnRefresh is used
}

func newBridgePolicy(fresh origin.Resolver, hosts []string) (*bridgePolicy, error) {
	trusted, err := origin.NewTrustedHosts(hosts)
	if err != nil {
		return nil, err
	}
	adm, err := origin.NewAdmitter(fresh, &origin.AdmitConfig{TrustedHosts: hosts})
	if err != nil {
		return nil, err
	}
	return &bridgePolicy{trusted: trusted, admitter: adm}, nil
}

// NewRefresher builds a Refresher. resolver must be uncached: a *Cache is
// refused, because a refresh must see the network's current state.
func NewRefresher(resolver Resolver, store Store, cfg *RefresherConfig) (*Refresher, error) {
	if resolver == nil || store == nil {
		return nil, errors.New("identity: NewRefresher: nil resolver or store")
	}
	if _, ok := resolver.(*Cache); ok {
		return nil, errors.New("identity: NewRefresher: resolver must be uncached")
	}
	r := &Refresher{resolver: resolver, store: store}
	if cfg != nil {
		r.cfg = *cfg
	}
	if c, ok := r.cfg.Cache.(*Cache); ok && c == nil {
		r.cfg.Cache = nil // a nil *Cache means no cache, not a panic at the first purge
	}
	if r.cfg.ResolveTimeout <= 0 {
		r.cfg.ResolveTimeout = ResolveTimeoutDefault
	}
	if r.cfg.DebounceTTL <= 0 {
		r.cfg.DebounceTTL = DebounceTTLDefault
	}
	if r.cfg.DebounceMaxEntries <= 0 {
		r.cfg.DebounceMaxEntries = DebounceMaxEntriesDefault
	}
	if r.cfg.Now == nil {
		r.cfg.Now = time.Now
	} else {
		adoptClock(resolver, r.cfg.Now)
		adoptClock(r.cfg.Cache, r.cfg.Now)
	}
	if r.cfg.Logger == nil {
		r.cfg.Logger = slog.New(slog.DiscardHandler)
	}
	var err error
	if r.fresh, err = NewOriginResolver(resolver); err != nil {
		return nil, err
	}
	if r.bridge, err = newBridgePolicy(r.fresh, r.cfg.TrustedHosts); err != nil {
		return nil, fmt.Errorf("identity: NewRefresher: %w", err)
	}
	r.debounce = newDebounce(r.cfg.DebounceTTL, r.cfg.DebounceMaxEntries)
	if r.tel, err = newRefreshTelemetry(r.cfg.TracerProvider, r.cfg.MeterProvider); err != nil {
		return nil, fmt.Errorf("identity: NewRefresher: %w", err)
	}
	return r, nil
}

// RefreshHandle re-resolves did and stores its verified handle, in the
// seed's order: purge the DID from the cache; check the timeout debounce;
// resolve uncached under ResolveTimeout; verify the handle; take the per-DID
// lock; re-read the stored handle inside it; purge the old handle's cache
// entry; write the new handle.
//
// Inside the lock, a handle that differs from the stored one is confirmed by
// a second uncached resolution before it is written, so a refresher that
// resolved before a rename cannot overwrite one that resolved after it.
//
// When the new handle is still stored on another row and the Store is a
// HandleHolder, that row is refreshed first and the refresh tried once more.
//
// A row holding origin fields has them cleared when the fresh resolution is
// off the bridge, under the lock; a document naming an untrusted PDS clears
// them even when the handle does not verify (the refresh still fails
// ReasonUnverified).
//
// Errors are *RefreshError; test them with errors.Is against ErrUnresolved,
// ErrPermanent, ErrBusy and ErrDeferred.
func (r *Refresher) RefreshHandle(ctx context.Context, did DID) error {
	_, err := r.refresh(ctx, did, r.bridge, triggerCall)
	return err
}

// refreshResult says what a successful refresh did.
type refreshResult struct {
	old, new      Handle
	updated       bool
	originCleared bool
}

// refresh is one traced, counted refresh of did, asked for by trigger.
func (r *Refresher) refresh(ctx context.Context, did DID, p *bridgePolicy, trigger string) (refreshResult, error) {
	ctx, span := r.tel.start(ctx, did, trigger)
	res, err := r.refreshOnce(ctx, did, p)
	if r.incumbentFreed(ctx, did, res.new, err, p) {
		if span.IsRecording() {
			span.SetAttributes(attrIncumbentRun.Bool(true))
		}
		res, err = r.refreshOnce(ctx, did, p)
	}
	r.tel.end(ctx, span, trigger, res, err)
	return res, err
}

// refreshIncumbent refreshes the row holding another refresh's new handle,
// in a span of its own below that refresh's, without chasing further.
func (r *Refresher) refreshIncumbent(ctx context.Context, did DID, p *bridgePolicy) error {
	ctx, span := r.tel.start(ctx, did, triggerIncumbent)
	res, err := r.refreshOnce(ctx, did, p)
	r.tel.end(ctx, span, triggerIncumbent, res, err)
	return err
}

// incumbentFreed handles a refresh of did that failed because another row
// holds its new handle h: when the Store is a HandleHolder, it refreshes
// that row (without chasing further) and reports whether h is free now.
func (r *Refresher) incumbentFreed(ctx context.Context, did DID, h Handle, err error, p *bridgePolicy) bool {
	holders, ok := r.store.(HandleHolder)
	var re *RefreshError
	if !ok || h.IsZero() || !errors.As(err, &re) || re.Reason != ReasonHandleTaken {
		return false
	}
	inc, herr := holders.HolderOf(ctx, h)
	if herr != nil || inc.DID == did {
		return false
	}
	if ierr := r.refreshIncumbent(ctx, inc.DID, p); ierr != nil {
		r.cfg.Logger.DebugContext(ctx, "incumbent not refreshed", "did", did, "incumbent", inc.DID, "err", ierr)
		return false
	}
	now, herr := holders.HolderOf(ctx, h)
	return errors.Is(herr, ErrUnknownDID) || (herr == nil && now.DID == did)
}

func (r *Refresher) refreshOnce(ctx context.Context, did DID, p *bridgePolicy) (refreshResult, error) {
	var res refreshResult
	// Fail closed before touching anything.
	if r.cfg.Lock == nil || r.cfg.Lock.Wait() <= 0 {
		return res, unresolved(did, ReasonLockUnavailable, ErrLockUnavailable)
	}
	if _, err := ParseDID(string(did)); err != nil {
		return res, permanent(did, ReasonInvalidDID, err)
	}
	if r.cfg.Cache != nil {
		if err := r.cfg.Cache.Purge(ctx, did); err != nil {
			return res, unresolved(did, ReasonPurgeFailed, err)
		}
	}
	if r.debounce.active(did, r.cfg.Now()) {
		e := unresolved(did, ReasonDebounced, nil)
		e.Deferred = true
		return res, e
	}
	id, h, err := r.resolveVerified(ctx, did)
	if err != nil {
		if id != nil {
			// The document resolved but its handle did not verify.
			res.originCleared, err = r.clearUnverified(ctx, did, id, p, err)
		}
		return res, err
	}
	err = r.cfg.Lock.WithLock(ctx, did, func(ctx context.Context) error {
		s, err := r.store.Subject(ctx, did)
		if errors.Is(err, ErrUnknownDID) {
			// Deleted between the first read and this one: transient.
			return unresolved(did, ReasonRowGone, err)
		}
		if err != nil {
			return unresolved(did, ReasonStoreFailed, err)
		}
		res.old, res.new = s.Handle, h
		if s.Handle != h {
			// Confirm with a resolution that started inside the lock:
			// lock order is then resolution order.
			if id, h, err = r.resolveVerified(ctx, did); err != nil {
				return err
			}
			res.new = h
		}
		if s.Handle != h {
			if err := r.checkCommunity(ctx, s, id, h); err != nil {
				return err
			}
			if r.cfg.Cache != nil {
				// Purge before writing, so a failed purge is redriven
				// rather than lost.
				if !s.Handle.IsZero() {
					if err := r.cfg.Cache.PurgeHandle(ctx, s.Handle); err != nil {
						return unresolved(did, ReasonPurgeFailed, err)
					}
				}
				if err := r.cfg.Cache.PurgeHandle(ctx, h); err != nil {
					return unresolved(did, ReasonPurgeFailed, err)
				}
			}
			if err := r.store.SetHandle(ctx, s, h); err != nil {
				if errors.Is(err, ErrHandleTaken) {
					return unresolved(did, ReasonHandleTaken, err)
				}
				return unresolved(did, ReasonStoreFailed, err)
			}
			res.updated = true
		}
		if p.clearsOrigin(s, id, h) {
			if err := r.store.ClearOrigin(ctx, s, origin.ClearAll()); err != nil {
				return unresolved(did, ReasonStoreFailed, err)
			}
			res.originCleared = true
		}
		return r.setPDS(ctx, s, id)
	})
	if err != nil {
		return res, r.lockError(ctx, did, err)
	}
	r.cfg.Logger.DebugContext(ctx, "identity refreshed", "did", did, "updated", res.updated, "origin_cleared", res.originCleared)
	return res, nil
}

func (r *Refresher) lockError(ctx context.Context, did DID, err error) error {
	var re *RefreshError
	switch {
	case errors.As(err, &re):
		return re
	case errors.Is(err, ErrLockBusy):
		return &RefreshError{DID: did, Class: ClassBusy, Deferred: true, Reason: ReasonLockBusy, Err: err}
	case ctx.Err() != nil:
		return unresolved(did, ReasonCancelled, err)
	case errors.Is(err, ErrLockUnavailable):
		return unresolved(did, ReasonLockUnavailable, err)
	}
	return unresolved(did, ReasonStoreFailed, fmt.Errorf("lock: %w", err))
}

func (r *Refresher) checkCommunity(ctx context.Context, s Subject, id *Identity, h Handle) error {
	if s.Kind != KindCommunity {
		return nil
	}
	if r.cfg.Community == nil {
		return permanent(s.DID, ReasonInvalidHandle, errors.New("no community hooks configured"))
	}
	if err := r.cfg.Community.ValidateHandle(h); err != nil {
		return permanent(s.DID, ReasonInvalidHandle, err)
	}
	if err := r.cfg.Community.CheckHostedBy(ctx, s, id); err != nil {
		if errors.Is(err, ErrHostedByMismatch) {
			return permanent(s.DID, ReasonHostedByMismatch, err)
		}
		return unresolved(s.DID, ReasonHostedByPending, err)
	}
	return nil
}

// clearUnverified handles a refresh whose fresh document resolved while its
// handle did not verify. Spec 5.2 clears on the PDS alone: when the
// document names a PDS off the bridge, a user row's origin fields are
// cleared, and a community's when its stored PDS was a trusted host (a
// community off the bridge may keep its own domain, which cannot be judged
// without a verified handle). It returns whether it cleared, and err (the
// unverified failure) unless the clear itself failed.
func (r *Refresher) clearUnverified(ctx context.Context, did DID, id *Identity, p *bridgePolicy, err error) (bool, error) {
	if p.trusted.Contains(id.PDS) {
		return false, err
	}
	cleared := false
	lerr := r.cfg.Lock.WithLock(ctx, did, func(ctx context.Context) error {
		s, serr := r.store.Subject(ctx, did)
		if serr != nil || !s.HasOrigin || (s.Kind == KindCommunity && !p.trusted.Contains(s.PDS)) {
			return nil // nothing to clear here; the unverified outcome stands
		}
		if cerr := r.store.ClearOrigin(ctx, s, origin.ClearAll()); cerr != nil {
			return unresolved(did, ReasonStoreFailed, cerr)
		}
		cleared = true
		return nil
	})
	if lerr != nil {
		return false, r.lockError(ctx, did, lerr)
	}
	return cleared, err
}

// resolveVerified resolves did uncached under ResolveTimeout and verifies
// its handle. Only a deadline hit while the caller is still live is
// recorded in the debounce. When the document resolved but the handle did
// not verify, the Identity is returned with the error.
func (r *Refresher) resolveVerified(ctx context.Context, did DID) (*Identity, Handle, error) {
	rctx, cancel := context.WithTimeout(ctx, r.cfg.ResolveTimeout)
	defer cancel()
	id, err := r.resolver.LookupDID(rctx, did)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, "", unresolved(did, ReasonCancelled, err)
		case errors.Is(rctx.Err(), context.DeadlineExceeded):
			r.debounce.record(did, r.cfg.Now())
			return nil, "", unresolved(did, ReasonResolveTimeout, err)
		case errors.Is(err, ErrInvalidDID):
			return nil, "", permanent(did, ReasonInvalidDID, err)
		case errors.Is(err, ErrSubjectMismatch):
			// The document names another DID (spec 1.4, 3.4): permanent.
			return nil, "", permanent(did, ReasonSubjectMismatch, err)
		}
		return nil, "", unresolved(did, ReasonResolveFailed, err)
	}
	h, err := VerifiedHandle(id, did)
	switch {
	case errors.Is(err, ErrSubjectMismatch):
		return nil, "", permanent(did, ReasonSubjectMismatch, err)
	case err != nil:
		return id, "", unresolved(did, ReasonUnverified, err)
	}
	return id, h, nil
}

// clearsOrigin reports whether s's origin fields must be cleared now that
// a fresh resolution verified h (spec 5.2): the row holds some, the DID is
// off the bridge, and, for a community, the origin is not one spec 4.4
// lets a repository off the bridge keep.
func (p *bridgePolicy) clearsOrigin(s Subject, id *Identity, h Handle) bool {
	if !s.HasOrigin || !p.offBridge(id, h) {
		return false
	}
	if s.Kind != KindCommunity {
		return true
	}
	if s.Origin != "" {
		// Off the bridge a community may keep only its own domain.
		_, err := origin.CommunityOrigin(s.Origin, string(h), false)
		return err != nil
	}
	// The origin is unknown and may be a native community's own domain
	// (spec 4.4): only one whose stored PDS was the bridge has left it.
	return p.trusted.Contains(s.PDS)
}

// offBridge asks origin whether a verified, fresh resolution has left the
// bridge: its PDS is no longer trusted, or the handle's registrable domain
// no longer matches the PDS's.
func (p *bridgePolicy) offBridge(id *Identity, h Handle) bool {
	clear, _ := p.admitter.ClearOnRefresh(origin.Resolution{DID: string(id.DID), Handle: string(h), PDS: id.PDS, HandleDID: string(id.DID)})
	return clear
}
