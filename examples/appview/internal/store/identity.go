package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/origin"
)

// IdentityStore adapts Store to identity.Store, identity.Lister and
// identity.OriginLister, so the library's Refresher and Sweep read and
// write the AppView's tables.
type IdentityStore struct{ s *Store }

var (
	_ identity.Store     = IdentityStore{}
	_ identity.Lister    = IdentityStore{}
	_ identity.PDSSetter = IdentityStore{}
	// Without it a row holding origin fields on a host removed from the
	// trusted list would never be swept, and would keep them (spec 5.2).
	_ identity.OriginLister = IdentityStore{}
)

// Identity returns the identity.Store view of s.
func (s *Store) Identity() IdentityStore { return IdentityStore{s: s} }

// subjectSelect reads Subjects from both tables; %[1]s is the users'
// WHERE clause and %[2]s the communities'. A community's origin is read so
// that one off the bridge keeps exactly the spec 4.4 own-domain origins
// (identity.Subject.Origin); a user's never survives leaving the bridge.
var subjectSelect = `SELECT 'user', did, handle, pds_url, ` + hasOriginSQL(KindUser) + `, '', ''
	FROM users WHERE %[1]s
	UNION ALL SELECT 'community', did, handle, pds_url, ` + hasOriginSQL(KindCommunity) + `, hosted_by_did, COALESCE(origin, '')
	FROM communities WHERE %[2]s`

// subjectQuery is subjectSelect with one WHERE clause for both tables.
func subjectQuery(where string) string { return fmt.Sprintf(subjectSelect, where, where) }

func scanSubject(row pgx.Row) (identity.Subject, error) {
	var sub identity.Subject
	var kind, did, handle, hostedBy string
	if err := row.Scan(&kind, &did, &handle, &sub.PDS, &sub.HasOrigin, &hostedBy, &sub.Origin); err != nil {
		return identity.Subject{}, err
	}
	sub.DID, sub.Handle, sub.HostedBy = identity.DID(did), identity.Handle(handle), identity.DID(hostedBy)
	sub.Kind = identity.KindUser
	if kind == string(KindCommunity) {
		sub.Kind = identity.KindCommunity
	}
	return sub, nil
}

// Subject is one indexed read (a primary-key probe of each table).
func (a IdentityStore) Subject(ctx context.Context, did identity.DID) (identity.Subject, error) {
	sub, err := scanSubject(a.s.db.QueryRow(ctx, subjectQuery("did = $1")+" LIMIT 1", string(did)))
	if errors.Is(err, pgx.ErrNoRows) {
		return identity.Subject{}, identity.ErrUnknownDID
	}
	if err != nil {
		return identity.Subject{}, fmt.Errorf("store: subject: %w", err)
	}
	return sub, nil
}

func kindOf(k identity.Kind) Kind {
	if k == identity.KindCommunity {
		return KindCommunity
	}
	return KindUser
}

// SetHandle writes the verified handle; a unique conflict is
// identity.ErrHandleTaken.
func (a IdentityStore) SetHandle(ctx context.Context, sub identity.Subject, h identity.Handle) error {
	t, err := table(kindOf(sub.Kind))
	if err != nil {
		return err
	}
	tag, err := a.s.db.Exec(ctx, `UPDATE `+t+` SET handle = $2, updated_at = now() WHERE did = $1`, string(sub.DID), string(h))
	if IsUniqueViolation(err) {
		return fmt.Errorf("%w: %s", identity.ErrHandleTaken, h)
	}
	if err != nil {
		return fmt.Errorf("store: set handle: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return identity.ErrUnknownDID
	}
	return nil
}

// SetPDS implements identity.PDSSetter: a verified refresh records the PDS
// URL the fresh DID document names, so a repository that left the bridge is
// no longer listed as bridged by ListBridged.
func (a IdentityStore) SetPDS(ctx context.Context, sub identity.Subject, pds string) error {
	t, err := table(kindOf(sub.Kind))
	if err != nil {
		return err
	}
	tag, err := a.s.db.Exec(ctx, `UPDATE `+t+` SET pds_url = $2, updated_at = now() WHERE did = $1`, string(sub.DID), pds)
	if err != nil {
		return fmt.Errorf("store: set pds: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return identity.ErrUnknownDID
	}
	return nil
}

// ClearOrigin writes "" over every origin column (the library passes
// origin.ClearAll(); the store's clear is that write).
func (a IdentityStore) ClearOrigin(ctx context.Context, sub identity.Subject, _ origin.Write) error {
	_, err := a.s.ClearOrigin(ctx, kindOf(sub.Kind), string(sub.DID))
	return err
}

// ListBridged lists rows with a stored PDS whose host is in hosts.
func (a IdentityStore) ListBridged(ctx context.Context, hosts []string, fn func(identity.Subject) error) error {
	trusted, err := origin.NewTrustedHosts(hosts)
	if err != nil {
		return err
	}
	return a.list(ctx, "list bridged", subjectQuery("pds_url <> ''")+" ORDER BY 2",
		func(sub identity.Subject) bool { return trusted.Contains(sub.PDS) }, fn)
}

// ListWithOrigin implements identity.OriginLister: every row holding a
// non-empty origin field, whatever its stored PDS. Sweep skips the ones on
// a trusted host itself, so no host list is needed here.
func (a IdentityStore) ListWithOrigin(ctx context.Context, fn func(identity.Subject) error) error {
	q := fmt.Sprintf(subjectSelect, hasOriginSQL(KindUser), hasOriginSQL(KindCommunity)) + " ORDER BY 2"
	return a.list(ctx, "list with origin", q, nil, fn)
}

// list reads every row of q that keep accepts (nil: all), releases the
// connection and only then calls fn, so fn (which takes locks and writes)
// never waits on a pool slot this scan holds.
func (a IdentityStore) list(ctx context.Context, what, q string, keep func(identity.Subject) bool, fn func(identity.Subject) error) error {
	rows, err := a.s.db.Query(ctx, q)
	if err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	var subs []identity.Subject
	for rows.Next() {
		sub, err := scanSubject(rows)
		if err != nil {
			rows.Close()
			return fmt.Errorf("store: %s: %w", what, err)
		}
		if keep == nil || keep(sub) {
			subs = append(subs, sub)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	for _, sub := range subs {
		if err := fn(sub); err != nil {
			return err
		}
	}
	return nil
}

// OriginIndex adapts Store to origin.OriginIndex for LookupOrigin.
type OriginIndex struct{ s *Store }

var _ origin.OriginIndex = OriginIndex{}

// Origins returns the origin.OriginIndex view of s.
func (s *Store) Origins() OriginIndex { return OriginIndex{s: s} }

// ExactOrigin uses the (origin_username, origin) index.
func (o OriginIndex) ExactOrigin(ctx context.Context, name, host string) ([]string, error) {
	return o.dids(ctx, `SELECT did FROM users WHERE origin_username = $1 AND origin = $2 LIMIT 2`, name, host)
}

// FoldOrigin uses the (lower(origin_username), origin) index. origin is
// stored normalised (lower-case), as ParseAddress returns the host.
func (o OriginIndex) FoldOrigin(ctx context.Context, name, host string) ([]string, error) {
	return o.dids(ctx, `SELECT did FROM users WHERE lower(origin_username) = lower($1) AND origin = $2 LIMIT 2`, name, host)
}

func (o OriginIndex) dids(ctx context.Context, sql, name, host string) ([]string, error) {
	rows, err := o.s.db.Query(ctx, sql, name, host)
	if err != nil {
		return nil, fmt.Errorf("store: origin lookup: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			return nil, fmt.Errorf("store: origin lookup: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: origin lookup: %w", err)
	}
	return out, nil
}
