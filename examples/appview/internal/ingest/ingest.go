package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/fedkit/fedkit/examples/appview/internal/jetstream"
	"github.com/fedkit/fedkit/examples/appview/internal/store"
	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/origin"
)

// Collections the ingester reads.
const (
	CollectionProfile          = "app.bsky.actor.profile"
	CollectionPost             = "app.bsky.feed.post"
	CollectionCommunityProfile = "social.coves.community.profile"
)

// Outcome classifies the result of processing one event.
type Outcome int

const (
	Done       Outcome = iota // applied, or nothing to do
	Permanent                 // can never succeed: logged and dropped
	Unresolved                // redrive later, spending an attempt
	Busy                      // redrive later without spending an attempt
	Transient                 // retry in-line, then redrive with the larger budget
)

func (o Outcome) String() string {
	return [...]string{"done", "permanent", "unresolved", "busy", "transient"}[o]
}

// Application errors, matched with errors.Is.
var (
	// ErrPermanent marks an event that can never succeed.
	ErrPermanent = errors.New("ingest: permanent")
	// ErrUnresolved marks an event naming something not resolvable yet:
	// redriven, never retried in-line (the lane must not wait on another
	// repository).
	ErrUnresolved = errors.New("ingest: unresolved")
	// ErrTransient marks a failure that may pass at once (a database
	// error): retried in-line, then redriven.
	ErrTransient = errors.New("ingest: transient")
)

// Error carries a closed reason code for the redrive table and logs; the
// cause stays in Err.
type Error struct {
	Class  error // ErrPermanent or ErrUnresolved
	Reason string
	Err    error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return "ingest: " + e.Reason
	}
	return "ingest: " + e.Reason + ": " + e.Err.Error()
}

func (e *Error) Unwrap() []error { return []error{e.Class, e.Err} }

func permanent(reason string, err error) error {
	return &Error{Class: ErrPermanent, Reason: reason, Err: err}
}

func unresolved(reason string, err error) error {
	return &Error{Class: ErrUnresolved, Reason: reason, Err: err}
}

func transient(reason string, err error) error {
	return &Error{Class: ErrTransient, Reason: reason, Err: err}
}

// Classify maps a processing error to an Outcome, by type only. The
// library's refresh errors keep the library's class; the ingester's own
// store failures and any unclassified error are transient (spec 3.4: any
// unwrapped error).
func Classify(err error) Outcome {
	switch {
	case err == nil:
		return Done
	case errors.Is(err, identity.ErrBusy), errors.Is(err, identity.ErrDeferred):
		return Busy
	case errors.Is(err, identity.ErrPermanent), errors.Is(err, ErrPermanent):
		return Permanent
	case errors.Is(err, identity.ErrUnresolved), errors.Is(err, ErrUnresolved):
		return Unresolved
	}
	return Transient
}

// Code returns the closed reason code of err, for the redrive table.
func Code(err error) string {
	var re *identity.RefreshError
	if errors.As(err, &re) {
		return re.Reason
	}
	var ie *Error
	if errors.As(err, &ie) {
		return ie.Reason
	}
	if err == nil {
		return ""
	}
	return "error"
}

// Defaults for Config (spec 3.4).
const (
	RedriveIntervalDefault    = 5 * time.Minute
	BusyDelayDefault          = 30 * time.Second
	UnresolvedAttemptsDefault = 3
	TransientAttemptsDefault  = 10
)

// InlineRetryDelaysDefault returns the waits before the in-line retries of
// a transient failure: 200 ms, 1 s and 3 s.
func InlineRetryDelaysDefault() []time.Duration {
	return []time.Duration{200 * time.Millisecond, time.Second, 3 * time.Second}
}

// Config configures an Ingester.
type Config struct {
	// IndexAllProfiles creates rows for any DID whose profile arrives with
	// a verified handle. Defaults to false: only DIDs whose fresh DID
	// document names a trusted bridge PDS get a row.
	IndexAllProfiles bool
	// RedriveInterval is when an unresolved event is retried. Defaults to
	// RedriveIntervalDefault.
	RedriveInterval time.Duration
	// BusyDelay is when a busy event is retried. Defaults to BusyDelayDefault.
	BusyDelay time.Duration
	// UnresolvedAttempts bounds the redrive attempts of an unresolved
	// event. Defaults to UnresolvedAttemptsDefault.
	UnresolvedAttempts int
	// TransientAttempts bounds the redrive attempts of an event that kept
	// failing transiently. Defaults to TransientAttemptsDefault.
	TransientAttempts int
	// InlineRetryDelays are the waits before each in-line retry of a
	// transient failure, on the event's lane, before it goes to redrive.
	// A non-nil empty slice disables in-line retries. Defaults to
	// InlineRetryDelaysDefault().
	InlineRetryDelays []time.Duration
	// ResolveTimeout bounds the resolution of a DID about to get a row,
	// when admission did not resolve it already. Defaults to
	// identity.ResolveTimeoutDefault, the refresh's bound.
	ResolveTimeout time.Duration
	// Now defaults to time.Now.
	Now func() time.Time
	// Logger defaults to discarding.
	Logger *slog.Logger
}

// Deps are what an Ingester needs.
type Deps struct {
	Store     *store.Store
	Refresher *identity.Refresher
	Admitter  *origin.Admitter
	// Resolver is the uncached resolver, for rows about to be created.
	Resolver identity.Resolver
	// Trusted are the bridge PDS hosts, for deciding which new DIDs get rows.
	Trusted origin.TrustedHosts
	// HostedBy checks the hosted-by claims of community profiles.
	HostedBy HostedBy
}

// Ingester processes events.
type Ingester struct {
	d   Deps
	cfg Config
	log *slog.Logger
}

// New returns an Ingester.
func New(d Deps, cfg *Config) (*Ingester, error) {
	if d.Store == nil || d.Refresher == nil || d.Admitter == nil || d.Resolver == nil || d.HostedBy.Resolver == nil {
		return nil, errors.New("ingest: missing dependency")
	}
	c := Config{}
	if cfg != nil {
		c = *cfg
	}
	if c.RedriveInterval <= 0 {
		c.RedriveInterval = RedriveIntervalDefault
	}
	if c.BusyDelay <= 0 {
		c.BusyDelay = BusyDelayDefault
	}
	if c.UnresolvedAttempts <= 0 {
		c.UnresolvedAttempts = UnresolvedAttemptsDefault
	}
	if c.TransientAttempts <= 0 {
		c.TransientAttempts = TransientAttemptsDefault
	}
	if c.InlineRetryDelays == nil {
		c.InlineRetryDelays = InlineRetryDelaysDefault()
	}
	if c.ResolveTimeout <= 0 {
		c.ResolveTimeout = identity.ResolveTimeoutDefault
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return &Ingester{d: d, cfg: c, log: c.Logger}, nil
}

// Handle is the jetstream.Handler: it processes a live event (retrying a
// transient failure in-line) and records unresolved, busy and still-failing
// ones for redrive. It fails only when the redrive write fails, so the
// consumer retries and the cursor holds.
func (in *Ingester) Handle(ctx context.Context, f jetstream.Frame) error {
	err := in.processRetrying(ctx, f)
	out := Classify(err)
	switch out {
	case Done:
		return nil
	case Permanent:
		in.log.Warn("ingest: dropping event", "did", f.DID, "kind", f.Kind, "time_us", f.TimeUS, "reason", Code(err), "err", err)
		return nil
	}
	if ctx.Err() != nil {
		// Shutting down: leave the event before the cursor, to be replayed.
		return ctx.Err()
	}
	in.log.Info("ingest: event queued for redrive", "did", f.DID, "kind", f.Kind, "time_us", f.TimeUS, "outcome", out.String(), "reason", Code(err))
	return in.d.Store.Enqueue(ctx, f.DID, f.TimeUS, f.Kind, f.Raw, 0, in.cfg.Now().Add(in.retryDelay(out, err)), Code(err))
}

// retryDelay is how long an event to be redriven waits. A busy lock is
// soon free: BusyDelay. Anything else waits RedriveInterval, a live
// debounce included: it lasts the identity negative TTL, which outlasts
// BusyDelay, and only RedriveInterval is held above it (spec 3.4: each
// redrive must reach the network).
func (in *Ingester) retryDelay(out Outcome, err error) time.Duration {
	if out == Busy && Code(err) != identity.ReasonDebounced {
		return in.cfg.BusyDelay
	}
	return in.cfg.RedriveInterval
}

// processRetrying is Process with the in-line retries of a transient
// failure. Permanent, unresolved and busy results return at once: waiting
// on the lane cannot change them.
func (in *Ingester) processRetrying(ctx context.Context, f jetstream.Frame) error {
	err := in.Process(ctx, f)
	for i, d := range in.cfg.InlineRetryDelays {
		if Classify(err) != Transient {
			return err
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		in.log.Debug("ingest: retrying in-line", "did", f.DID, "kind", f.Kind, "retry", i+1, "reason", Code(err))
		err = in.Process(ctx, f)
	}
	return err
}

// Process applies one event and returns its classified error.
func (in *Ingester) Process(ctx context.Context, f jetstream.Frame) error {
	switch f.Kind {
	case jetstream.KindIdentity:
		return in.identityEvent(ctx, f)
	case jetstream.KindAccount:
		return in.accountEvent(ctx, f)
	case jetstream.KindCommit:
		return in.commitEvent(ctx, f)
	}
	return nil // a kind this consumer does not know: nothing to do
}

func (in *Ingester) identityEvent(ctx context.Context, f jetstream.Frame) error {
	ev, err := identity.DecodeIdentityEvent(f.Raw)
	if err != nil {
		return permanent("malformed", err)
	}
	// The one indexed read: it finds unknown DIDs (the whole network's
	// identity events arrive here) and the per-DID seq high-water mark.
	m, err := in.d.Store.MarkOf(ctx, ev.DID)
	if err != nil {
		return transient(identity.ReasonStoreFailed, err)
	}
	if m.Kind == store.KindNone {
		return nil
	}
	if ev.Seq > 0 && ev.Seq < m.IdentitySeq {
		in.log.Debug("ingest: stale identity event ignored", "did", ev.DID, "seq", ev.Seq, "mark", m.IdentitySeq)
		return nil
	}
	if err := in.d.Refresher.HandleIdentityEvent(ctx, ev); err != nil {
		return err
	}
	if ev.Seq > 0 {
		if _, err := in.d.Store.AdvanceIdentitySeq(ctx, m.Kind, ev.DID, ev.Seq); err != nil {
			return transient(identity.ReasonStoreFailed, err)
		}
	}
	return nil
}

func (in *Ingester) accountEvent(ctx context.Context, f jetstream.Frame) error {
	a := f.Account
	// One indexed read: unknown DIDs stop here; known ones get the seq guard.
	m, err := in.d.Store.MarkOf(ctx, f.DID)
	if err != nil {
		return transient(identity.ReasonStoreFailed, err)
	}
	if m.Kind == store.KindNone {
		return nil
	}
	seq := a.Seq
	if seq <= 0 {
		// Without a seq there is no order; time_us is monotonic on one
		// stream, so the guard still rejects replays.
		seq = f.TimeUS
	}
	if seq <= m.AccountSeq {
		in.log.Debug("ingest: stale account event ignored", "did", f.DID, "seq", seq, "mark", m.AccountSeq)
		return nil
	}
	// The library purges the caches and, under the per-DID lock, clears
	// the origin fields of a deleted or taken-down account.
	ev := identity.AccountEvent{DID: f.DID, Seq: a.Seq, Active: a.Active, Status: a.Status}
	if t, err := time.Parse(time.RFC3339Nano, a.Time); err == nil {
		ev.Time = t
	}
	if err := in.d.Refresher.HandleAccountEvent(ctx, ev); err != nil {
		return err
	}
	status := ""
	if !a.Active {
		status = dropNUL(a.Status)
		if status == "" {
			status = "inactive"
		}
	}
	// Recorded last, so a failed clear is redriven rather than hidden by
	// the guard.
	if _, err := in.d.Store.ApplyAccount(ctx, m.Kind, f.DID, seq, status); err != nil {
		return transient(identity.ReasonStoreFailed, err)
	}
	return nil
}

func (in *Ingester) commitEvent(ctx context.Context, f jetstream.Frame) error {
	c := f.Commit
	switch c.Collection {
	case CollectionProfile, CollectionCommunityProfile:
		if c.RKey != "self" {
			return permanent("bad-rkey", fmt.Errorf("profile rkey %q", c.RKey))
		}
		return in.profile(ctx, f)
	case CollectionPost:
		return in.post(ctx, f)
	}
	return nil
}

// profileRecord is the part of a profile record the AppView reads, for
// users (app.bsky.actor.profile) and communities alike.
type profileRecord struct {
	DisplayName    string `json:"displayName"`
	Description    string `json:"description"`
	Name           string `json:"name"` // communities
	Origin         string `json:"origin"`
	OriginUsername string `json:"originUsername"`
	OriginURL      string `json:"originUrl"`
	OriginSoftware string `json:"originSoftware"`
	HostedBy       string `json:"hostedBy"` // communities: the hosting instance's DID
}

func (in *Ingester) profile(ctx context.Context, f jetstream.Frame) error {
	c := f.Commit
	kind := store.KindUser
	if c.Collection == CollectionCommunityProfile {
		kind = store.KindCommunity
	}
	var rec profileRecord
	if c.Operation != jetstream.OpDelete {
		var err error
		if rec, err = decodeProfile(c.Record); err != nil {
			return err
		}
	}
	m, err := in.d.Store.MarkOf(ctx, f.DID)
	if err != nil {
		return transient(identity.ReasonStoreFailed, err)
	}
	known := m.Kind != store.KindNone
	if known && m.Kind != kind {
		return permanent("kind-mismatch", fmt.Errorf("%s is a %s", f.DID, m.Kind))
	}
	if c.Operation == jetstream.OpDelete {
		if !known {
			return nil
		}
		// The record that asserted the fields is gone: clear them.
		p := store.Profile{Rev: c.Rev, Origin: originOf(origin.ClearAll())}
		if kind == store.KindCommunity {
			p.HostedBy = new(string)
		}
		_, err := in.d.Store.ApplyProfile(ctx, kind, f.DID, p)
		if err != nil {
			return transient(identity.ReasonStoreFailed, err)
		}
		return nil
	}

	if kind == store.KindCommunity {
		return in.communityProfile(ctx, f, rec, known)
	}
	fields := origin.Fields{Origin: rec.Origin, Username: rec.OriginUsername, URL: rec.OriginURL, Software: rec.OriginSoftware}
	d := in.d.Admitter.Admit(ctx, origin.Event{DID: f.DID, Fields: fields, Known: known})
	switch d.Outcome {
	case origin.OutcomeRetry:
		return unresolved("origin-"+string(d.Reason), d.Err)
	case origin.OutcomeDrop:
		in.log.Info("ingest: profile dropped", "did", f.DID, "reason", string(d.Reason))
		return nil
	}
	p := store.Profile{Rev: c.Rev, DisplayName: rec.DisplayName, Description: rec.Description, Origin: originOf(d.Write)}
	if !known {
		_, err := in.create(ctx, store.KindUser, f.DID, "", d.Resolution)
		if errors.Is(err, errSkip) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	if _, err := in.d.Store.ApplyProfile(ctx, store.KindUser, f.DID, p); err != nil {
		return transient(identity.ReasonStoreFailed, err)
	}
	return nil
}

// communityProfile applies a community profile: origin fields through the
// community admission rule (spec 4.4), the fresh PDS URL over the stored
// one, and the hosted-by claim checked against the verified handle.
func (in *Ingester) communityProfile(ctx context.Context, f jetstream.Frame, rec profileRecord, known bool) error {
	c := f.Commit
	d := in.d.Admitter.AdmitCommunity(ctx, origin.CommunityEvent{
		DID:    f.DID,
		Fields: origin.CommunityFields{Origin: rec.Origin, URL: rec.OriginURL, Software: rec.OriginSoftware},
		Known:  known,
	})
	switch d.Outcome {
	case origin.OutcomeRetry:
		return unresolved("origin-"+string(d.Reason), d.Err)
	case origin.OutcomeDrop:
		in.log.Info("ingest: community profile dropped", "did", f.DID, "reason", string(d.Reason))
		return nil
	}
	p := store.Profile{Rev: c.Rev, DisplayName: rec.DisplayName, Description: rec.Description,
		Origin: originOf(d.Write), PDSURL: d.PDS}
	var handle identity.Handle
	if !known {
		h, err := in.create(ctx, store.KindCommunity, f.DID, rec.Name, d.Resolution)
		if errors.Is(err, errSkip) {
			return nil
		}
		if err != nil {
			return err
		}
		handle = h
	} else if rec.HostedBy != "" {
		// The stored handle is the verified one: identity events keep it.
		s, err := in.d.Store.Identity().Subject(ctx, identity.DID(f.DID))
		if err != nil {
			return transient(identity.ReasonStoreFailed, err)
		}
		handle = s.Handle
	}
	hostedBy := ""
	if rec.HostedBy != "" {
		err := in.d.HostedBy.Check(ctx, identity.DID(rec.HostedBy), handle)
		switch {
		case errors.Is(err, identity.ErrHostedByMismatch):
			// Drop the field, never the event.
			in.log.Info("ingest: community hosted-by claim refused", "did", f.DID, "reason", identity.ReasonHostedByMismatch)
		case err != nil:
			return unresolved(identity.ReasonHostedByPending, err)
		default:
			hostedBy = rec.HostedBy
		}
	}
	p.HostedBy = &hostedBy
	if _, err := in.d.Store.ApplyProfile(ctx, store.KindCommunity, f.DID, p); err != nil {
		return transient(identity.ReasonStoreFailed, err)
	}
	return nil
}

// create makes a row for an unknown DID from a fresh, verified resolution:
// res, the one admission just made for this event, or else one made now.
// Only DIDs on a trusted bridge PDS get one unless IndexAllProfiles is set.
// It returns the verified handle stored.
func (in *Ingester) create(ctx context.Context, kind store.Kind, did, name string, res *origin.Resolution) (identity.Handle, error) {
	pds, h, err := in.freshIdentity(ctx, did, res)
	if err != nil {
		return "", err
	}
	bridged := in.d.Trusted.Contains(pds)
	if !bridged && !in.cfg.IndexAllProfiles {
		return "", errSkip
	}
	if h == "" {
		// Never store an unverified handle; the bridge's profile is worth
		// waiting for.
		if bridged {
			return "", unresolved(identity.ReasonUnverified, identity.ErrHandleUnverified)
		}
		return "", errSkip
	}
	if kind == store.KindCommunity {
		if err := ValidateCommunityHandle(h); err != nil {
			return "", permanent(identity.ReasonInvalidHandle, err)
		}
		err = in.d.Store.InsertCommunity(ctx, did, string(h), name, pds)
	} else {
		err = in.d.Store.InsertUser(ctx, did, string(h), pds)
	}
	if store.IsUniqueViolation(err) {
		return "", unresolved(identity.ReasonHandleTaken, err)
	}
	if err != nil {
		return "", transient(identity.ReasonStoreFailed, err)
	}
	return h, nil
}

// freshIdentity returns the PDS and verified handle ("" when the handle did
// not verify both ways) of a DID about to get a row: from res when
// admission resolved it for this event, else resolved once now under
// ResolveTimeout, so a PLC server that never answers or trickles holds the
// lane no longer than a refresh. Its errors are classified.
func (in *Ingester) freshIdentity(ctx context.Context, did string, res *origin.Resolution) (string, identity.Handle, error) {
	if res != nil {
		if res.DID != did {
			return "", "", permanent(identity.ReasonSubjectMismatch, identity.ErrSubjectMismatch)
		}
		h, err := identity.ParseHandle(strings.TrimPrefix(res.Handle, "at://"))
		if err != nil || res.HandleDID != did || h == identity.HandleInvalid {
			return res.PDS, "", nil
		}
		return res.PDS, h, nil
	}
	rctx, cancel := context.WithTimeout(ctx, in.cfg.ResolveTimeout)
	defer cancel()
	id, err := in.d.Resolver.LookupDID(rctx, identity.DID(did))
	if err != nil {
		switch {
		case errors.Is(err, identity.ErrSubjectMismatch):
			// The document names another DID: resolving it again gives
			// the same answer, so retrying only spends attempts.
			return "", "", permanent(identity.ReasonSubjectMismatch, err)
		case errors.Is(err, identity.ErrDIDNotFound) || errors.Is(err, identity.ErrInvalidDID):
			return "", "", permanent(identity.ReasonResolveFailed, err)
		case ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded):
			return "", "", unresolved(identity.ReasonResolveTimeout, err)
		}
		return "", "", unresolved(identity.ReasonResolveFailed, err)
	}
	h, err := identity.VerifiedHandle(id, identity.DID(did))
	if errors.Is(err, identity.ErrSubjectMismatch) {
		return "", "", permanent(identity.ReasonSubjectMismatch, err)
	}
	if err != nil {
		return id.PDS, "", nil
	}
	return id.PDS, h, nil
}

// errSkip is a done outcome: the DID is not one this AppView indexes.
var errSkip error = skipError{}

type skipError struct{}

func (skipError) Error() string { return "ingest: not indexed" }

func originOf(w origin.Write) store.Origin {
	return store.Origin{Origin: w.Origin, Username: w.Username, URL: w.URL, Software: w.Software}
}

type postRecord struct {
	Text      string `json:"text"`
	CreatedAt string `json:"createdAt"`
}

func (in *Ingester) post(ctx context.Context, f jetstream.Frame) error {
	c := f.Commit
	k, err := in.d.Store.KindOf(ctx, f.DID)
	if err != nil {
		return transient(identity.ReasonStoreFailed, err)
	}
	if k != store.KindUser {
		return nil
	}
	uri := postURI(f)
	if c.Operation == jetstream.OpDelete {
		if err := in.d.Store.DeletePost(ctx, uri); err != nil {
			return transient(identity.ReasonStoreFailed, err)
		}
		return nil
	}
	p, err := postOf(f)
	if err != nil {
		return err
	}
	if err := in.d.Store.PutPost(ctx, f.DID, c.RKey, p); err != nil {
		return transient(identity.ReasonStoreFailed, err)
	}
	return nil
}

// decodeProfile reads a profile record (a user's or a community's) as the
// AppView stores it. Text fields lose any NUL: JSON carries \u0000, a
// PostgreSQL text column refuses it, and the record is otherwise good.
func decodeProfile(raw json.RawMessage) (profileRecord, error) {
	var rec profileRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return rec, permanent("malformed-record", err)
	}
	for _, s := range []*string{&rec.DisplayName, &rec.Description, &rec.Name, &rec.Origin, &rec.OriginUsername,
		&rec.OriginURL, &rec.OriginSoftware, &rec.HostedBy} {
		*s = dropNUL(*s)
	}
	return rec, nil
}

func postURI(f jetstream.Frame) string {
	return "at://" + f.DID + "/" + f.Commit.Collection + "/" + f.Commit.RKey
}

// postOf reads a post commit as the AppView stores it: its text without
// NULs, and its createdAt, or the event's time when that is not RFC 3339.
func postOf(f jetstream.Frame) (store.Post, error) {
	c := f.Commit
	var rec postRecord
	if err := json.Unmarshal(c.Record, &rec); err != nil {
		return store.Post{}, permanent("malformed-record", err)
	}
	created, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(rec.CreatedAt))
	if err != nil {
		created = time.UnixMicro(f.TimeUS).UTC()
	}
	return store.Post{URI: postURI(f), CID: dropNUL(c.CID), Text: dropNUL(rec.Text), CreatedAt: created}, nil
}

func dropNUL(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "")
}
