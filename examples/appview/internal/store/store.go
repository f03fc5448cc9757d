package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var (
	// ErrNotFound: no row matches.
	ErrNotFound = errors.New("store: not found")
	// ErrAmbiguous: more than one row matches case-insensitively.
	ErrAmbiguous = errors.New("store: ambiguous")
)

// Querier is the subset of pgx the store uses, so tests can count queries
// by wrapping the pool.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

var _ Querier = (*pgxpool.Pool)(nil)

// Store reads and writes the AppView tables.
type Store struct {
	db Querier
}

// New returns a Store over db (usually a *pgxpool.Pool).
func New(db Querier) *Store { return &Store{db: db} }

// DB returns the querier the store uses.
func (s *Store) DB() Querier { return s.db }

// Kind says which table holds a DID.
type Kind string

const (
	KindNone      Kind = ""
	KindUser      Kind = "user"
	KindCommunity Kind = "community"
)

// Origin holds the origin columns. A nil pointer is a NULL column (never
// written); an empty string is a cleared column.
type Origin struct {
	Origin   *string `json:"origin,omitempty"`
	Username *string `json:"originUsername,omitempty"`
	URL      *string `json:"originUrl,omitempty"`
	Software *string `json:"originSoftware,omitempty"`
}

// Actor is one row of users or communities, as the views need it.
type Actor struct {
	Kind          Kind
	DID           string
	Handle        string
	Name          string // communities only
	PDSURL        string
	DisplayName   string
	Description   string
	ProfileRev    string
	IdentitySeq   int64
	AccountSeq    int64
	AccountStatus string
	Origin        Origin
	UpdatedAt     time.Time
}

// KindOf is the one indexed read that decides whether an event concerns a
// known DID: a primary-key probe of each table in a single statement.
func (s *Store) KindOf(ctx context.Context, did string) (Kind, error) {
	var k string
	err := s.db.QueryRow(ctx, `SELECT 'user' FROM users WHERE did = $1
		UNION ALL SELECT 'community' FROM communities WHERE did = $1 LIMIT 1`, did).Scan(&k)
	if errors.Is(err, pgx.ErrNoRows) {
		return KindNone, nil
	}
	if err != nil {
		return KindNone, fmt.Errorf("store: kind of %s: %w", did, err)
	}
	return Kind(k), nil
}

// userSelect and communitySelect give both tables the same column list.
const userSelect = `SELECT 'user', did, handle, '' AS name, pds_url, display_name, description, profile_rev,
	identity_seq, account_seq, account_status, origin, origin_username, origin_url, origin_software, updated_at FROM users`
const communitySelect = `SELECT 'community', did, handle, name, pds_url, display_name, description, profile_rev,
	identity_seq, account_seq, account_status, origin, NULL::text, origin_url, origin_software, updated_at FROM communities`

func scanActor(row pgx.Row) (*Actor, error) {
	var a Actor
	var kind string
	err := row.Scan(&kind, &a.DID, &a.Handle, &a.Name, &a.PDSURL, &a.DisplayName, &a.Description, &a.ProfileRev,
		&a.IdentitySeq, &a.AccountSeq, &a.AccountStatus, &a.Origin.Origin, &a.Origin.Username, &a.Origin.URL,
		&a.Origin.Software, &a.UpdatedAt)
	if err != nil {
		return nil, err
	}
	a.Kind = Kind(kind)
	return &a, nil
}

func oneActor(ctx context.Context, q Querier, what, sql string, args ...any) (*Actor, error) {
	a, err := scanActor(q.QueryRow(ctx, sql, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	return a, nil
}

// ActorByDID returns the user or community with the DID.
func (s *Store) ActorByDID(ctx context.Context, did string) (*Actor, error) {
	return oneActor(ctx, s.db, "actor by DID",
		userSelect+` WHERE did = $1 UNION ALL `+communitySelect+` WHERE did = $1 LIMIT 1`, did)
}

// ActorByHandle returns the user or community with the handle (handles are
// stored lower-case; the comparison is case-insensitive anyway).
func (s *Store) ActorByHandle(ctx context.Context, handle string) (*Actor, error) {
	rows, err := s.db.Query(ctx, userSelect+` WHERE lower(handle) = lower($1) UNION ALL `+
		communitySelect+` WHERE lower(handle) = lower($1) LIMIT 2`, handle)
	if err != nil {
		return nil, fmt.Errorf("store: actor by handle: %w", err)
	}
	as, err := collectActors(rows)
	if err != nil {
		return nil, fmt.Errorf("store: actor by handle: %w", err)
	}
	switch len(as) {
	case 0:
		return nil, ErrNotFound
	case 1:
		return as[0], nil
	}
	return nil, ErrAmbiguous
}

func collectActors(rows pgx.Rows) ([]*Actor, error) {
	defer rows.Close()
	var out []*Actor
	for rows.Next() {
		a, err := scanActor(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func table(k Kind) (string, error) {
	switch k {
	case KindUser:
		return "users", nil
	case KindCommunity:
		return "communities", nil
	}
	return "", fmt.Errorf("store: no table for kind %q", k)
}

// InsertUser creates a user row, or does nothing if it exists. Origin
// fields start NULL (untouched).
func (s *Store) InsertUser(ctx context.Context, did, handle, pdsURL string) error {
	_, err := s.db.Exec(ctx, `INSERT INTO users (did, handle, pds_url) VALUES ($1, $2, $3)
		ON CONFLICT (did) DO NOTHING`, did, handle, pdsURL)
	if err != nil {
		return fmt.Errorf("store: insert user: %w", err)
	}
	return nil
}

// InsertCommunity creates a community row, or does nothing if it exists.
func (s *Store) InsertCommunity(ctx context.Context, did, handle, name, pdsURL string) error {
	_, err := s.db.Exec(ctx, `INSERT INTO communities (did, handle, name, pds_url) VALUES ($1, $2, $3, $4)
		ON CONFLICT (did) DO NOTHING`, did, handle, name, pdsURL)
	if err != nil {
		return fmt.Errorf("store: insert community: %w", err)
	}
	return nil
}

// AdvanceIdentitySeq moves the per-DID identity high-water mark forward and
// reports false for a stale or replayed seq, which must then be ignored.
func (s *Store) AdvanceIdentitySeq(ctx context.Context, k Kind, did string, seq int64) (bool, error) {
	return s.advance(ctx, k, "identity_seq", did, seq)
}

func (s *Store) advance(ctx context.Context, k Kind, col, did string, seq int64) (bool, error) {
	t, err := table(k)
	if err != nil {
		return false, err
	}
	tag, err := s.db.Exec(ctx, `UPDATE `+t+` SET `+col+` = $2 WHERE did = $1 AND `+col+` < $2`, did, seq)
	if err != nil {
		return false, fmt.Errorf("store: advance %s: %w", col, err)
	}
	return tag.RowsAffected() == 1, nil
}

// originColumns are each table's origin columns (communities have no
// origin_username).
var originColumns = map[Kind][]string{
	KindUser:      {"origin", "origin_username", "origin_url", "origin_software"},
	KindCommunity: {"origin", "origin_url", "origin_software"},
}

// hasOriginSQL is a predicate true when any of k's origin columns holds a
// value: a cleared (”) or untouched (NULL) column does not count.
func hasOriginSQL(k Kind) string {
	var parts []string
	for _, c := range originColumns[k] {
		parts = append(parts, "COALESCE("+c+", '') <> ''")
	}
	return "(" + strings.Join(parts, " OR ") + ")"
}

// ClearOrigin writes "" to every origin column that is not already "" and
// reports whether anything changed. "" (not NULL) makes the clear visible.
func (s *Store) ClearOrigin(ctx context.Context, k Kind, did string) (bool, error) {
	t, err := table(k)
	if err != nil {
		return false, err
	}
	var set []string
	for _, c := range originColumns[k] {
		set = append(set, c+" = ''")
	}
	tag, err := s.db.Exec(ctx, `UPDATE `+t+` SET `+strings.Join(set, ", ")+`, updated_at = now()
		WHERE did = $1 AND `+hasOriginSQL(k), did)
	if err != nil {
		return false, fmt.Errorf("store: clear origin: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// Profile is the part of a profile record the AppView keeps, with the
// origin columns to write: a nil member leaves its column as it is, a
// pointer to "" clears it.
type Profile struct {
	Rev         string
	DisplayName string
	Description string
	Origin      Origin
	// PDSURL, when not empty, replaces the stored PDS URL with the one a
	// fresh resolution for this event found.
	PDSURL string
	// HostedBy is a community's verified hosted-by DID; nil leaves the
	// column as it is, "" clears it. Ignored for users.
	HostedBy *string
}

// ApplyProfile writes a profile record to a known row. Records are gated by
// rev (TIDs sort as strings), so a redriven older record cannot overwrite a
// newer one. It reports false when the rev was stale or the row is gone.
func (s *Store) ApplyProfile(ctx context.Context, k Kind, did string, p Profile) (bool, error) {
	t, err := table(k)
	if err != nil {
		return false, err
	}
	// The tables differ in one column: a user's origin_username, a
	// community's hosted_by_did.
	col, last := "origin_username", any(p.Origin.Username)
	if k == KindCommunity {
		col, last = "hosted_by_did", p.HostedBy
	}
	tag, err := s.db.Exec(ctx, `UPDATE `+t+` SET profile_rev = $2, display_name = $3, description = $4,
		pds_url = CASE WHEN $5 = '' THEN pds_url ELSE $5 END,
		origin = COALESCE($6, origin), origin_url = COALESCE($7, origin_url),
		origin_software = COALESCE($8, origin_software), `+col+` = COALESCE($9, `+col+`),
		updated_at = now()
		WHERE did = $1 AND profile_rev < $2`,
		did, p.Rev, p.DisplayName, p.Description, p.PDSURL, p.Origin.Origin, p.Origin.URL, p.Origin.Software, last)
	if err != nil {
		return false, fmt.Errorf("store: apply profile: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Mark is what the event paths read first: which table holds the DID and
// its per-DID high-water marks. One primary-key probe per table, in one
// statement.
type Mark struct {
	Kind        Kind
	IdentitySeq int64
	AccountSeq  int64
}

// MarkOf returns the DID's Mark; Kind is KindNone for an unknown DID.
func (s *Store) MarkOf(ctx context.Context, did string) (Mark, error) {
	var m Mark
	var k string
	err := s.db.QueryRow(ctx, `SELECT 'user', identity_seq, account_seq FROM users WHERE did = $1
		UNION ALL SELECT 'community', identity_seq, account_seq FROM communities WHERE did = $1 LIMIT 1`, did).
		Scan(&k, &m.IdentitySeq, &m.AccountSeq)
	if errors.Is(err, pgx.ErrNoRows) {
		return Mark{}, nil
	}
	if err != nil {
		return Mark{}, fmt.Errorf("store: mark of %s: %w", did, err)
	}
	m.Kind = Kind(k)
	return m, nil
}

// ApplyAccount records an account event's status and moves the account
// seq high-water mark, in one statement. It reports false for a stale or
// replayed seq, which changed nothing.
func (s *Store) ApplyAccount(ctx context.Context, k Kind, did string, seq int64, status string) (bool, error) {
	t, err := table(k)
	if err != nil {
		return false, err
	}
	tag, err := s.db.Exec(ctx, `UPDATE `+t+` SET account_seq = $2, account_status = $3, updated_at = now()
		WHERE did = $1 AND account_seq < $2`, did, seq, status)
	if err != nil {
		return false, fmt.Errorf("store: apply account: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Post is one indexed post.
type Post struct {
	URI       string    `json:"uri"`
	CID       string    `json:"cid"`
	Text      string    `json:"text"`
	CreatedAt time.Time `json:"createdAt"`
}

// PutPost indexes a post, replacing an older version.
func (s *Store) PutPost(ctx context.Context, did, rkey string, p Post) error {
	_, err := s.db.Exec(ctx, `INSERT INTO posts (uri, did, rkey, cid, text, created_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (uri) DO UPDATE SET cid = EXCLUDED.cid, text = EXCLUDED.text, created_at = EXCLUDED.created_at`,
		p.URI, did, rkey, p.CID, p.Text, p.CreatedAt)
	if err != nil {
		return fmt.Errorf("store: put post: %w", err)
	}
	return nil
}

// DeletePost removes a post.
func (s *Store) DeletePost(ctx context.Context, uri string) error {
	if _, err := s.db.Exec(ctx, `DELETE FROM posts WHERE uri = $1`, uri); err != nil {
		return fmt.Errorf("store: delete post: %w", err)
	}
	return nil
}

// PostsByAuthor returns up to limit posts, newest first, strictly after the
// page position (before, beforeURI) in that order; a zero before starts at
// the newest. The URI breaks ties between posts created at the same time.
func (s *Store) PostsByAuthor(ctx context.Context, did string, before time.Time, beforeURI string, limit int) ([]Post, error) {
	if before.IsZero() {
		before, beforeURI = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), ""
	}
	rows, err := s.db.Query(ctx, `SELECT uri, cid, text, created_at FROM posts
		WHERE did = $1 AND (created_at < $2 OR (created_at = $2 AND $3 <> '' AND uri < $3))
		ORDER BY created_at DESC, uri DESC LIMIT $4`, did, before, beforeURI, limit)
	if err != nil {
		return nil, fmt.Errorf("store: posts: %w", err)
	}
	defer rows.Close()
	out := []Post{}
	for rows.Next() {
		var p Post
		if err := rows.Scan(&p.URI, &p.CID, &p.Text, &p.CreatedAt); err != nil {
			return nil, fmt.Errorf("store: posts: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: posts: %w", err)
	}
	return out, nil
}

// LoadCursor returns the stored cursor; ok is false when none is stored.
func (s *Store) LoadCursor(ctx context.Context, name string) (int64, bool, error) {
	var v int64
	err := s.db.QueryRow(ctx, `SELECT time_us FROM jetstream_cursor WHERE name = $1`, name).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("store: load cursor: %w", err)
	}
	return v, true, nil
}

// SaveCursor stores the cursor; it never moves it backwards.
func (s *Store) SaveCursor(ctx context.Context, name string, timeUS int64) error {
	_, err := s.db.Exec(ctx, `INSERT INTO jetstream_cursor (name, time_us) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET time_us = EXCLUDED.time_us, updated_at = now()
		WHERE jetstream_cursor.time_us < EXCLUDED.time_us`, name, timeUS)
	if err != nil {
		return fmt.Errorf("store: save cursor: %w", err)
	}
	return nil
}

// IsUniqueViolation reports a 23505 from Postgres.
func IsUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
