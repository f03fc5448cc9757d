package pgqueue

import (
	"context"
	"embed"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in version order. A file is
// named NNN_what.sql; NNN is its version.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("pgqueue: migration %q is not named NNN_what.sql", e.Name())
		}
		b, err := migrationFS.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("pgqueue: migration %d missing", i+1)
		}
	}
	return ms, nil
}

// SchemaVersion is the migration version this package's code needs.
const SchemaVersion = 4

// Schema returns the SQL of every migration, in order, for a caller who
// applies schema changes with their own tool rather than with Migrate. Each
// statement is idempotent, so applying it again is harmless.
func (q *Queue) Schema() (string, error) {
	ms, err := migrations()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "-- %s\n%s\n", m.name, q.render(m.sql))
	}
	return b.String(), nil
}

func (q *Queue) render(sql string) string {
	return strings.NewReplacer("{{p}}", q.qualified, "{{n}}", q.prefix).Replace(sql)
}

// Migrate creates the queue's tables, or upgrades tables an earlier version
// made, keeping their jobs. It is safe to call on every start and from
// several processes at once: a transaction-scoped advisory lock serialises
// them, and applied versions are recorded in the migrations table.
func (q *Queue) Migrate(ctx context.Context) error {
	return q.migrateTo(ctx, SchemaVersion)
}

func (q *Queue) migrateTo(ctx context.Context, target int) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, q.pool, func(tx pgx.Tx) error {
		h := fnv.New64a()
		h.Write([]byte("fedkit/pgqueue:" + q.qualified))
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(h.Sum64())); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, q.render(`CREATE TABLE IF NOT EXISTS {{p}}migrations (
			version    integer     PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now())`)); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, q.render(`SELECT version FROM {{p}}migrations`))
		if err != nil {
			return err
		}
		applied, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.version > target || slices.Contains(applied, int32(m.version)) {
				continue
			}
			if _, err := tx.Exec(ctx, q.render(m.sql)); err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, q.render(`INSERT INTO {{p}}migrations (version) VALUES ($1)`), m.version); err != nil {
				return err
			}
			q.log.Info("pgqueue: migrated", "version", m.version, "name", m.name, "tables", q.qualified)
		}
		return nil
	})
	return mapError("migrate", err)
}
