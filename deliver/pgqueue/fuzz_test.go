package pgqueue_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/deliver/pgqueue"
)

var safeIdent = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// FuzzNewConfig checks that TablePrefix and Schema, which are spliced into
// SQL, are accepted only as plain lower-case identifiers short enough for
// Postgres, and that the SQL then names only the queue's own tables.
func FuzzNewConfig(f *testing.F) {
	f.Add("fedkit_delivery_", "")
	f.Add("tenant_7_", "deliveries")
	f.Add(`x"; DROP TABLE y; --`, "")
	f.Add("", `a".b`)
	f.Add(strings.Repeat("p", 41), "s")
	// pgxpool.New does not connect.
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(pool.Close)
	f.Fuzz(func(t *testing.T, prefix, schema string) {
		q, err := pgqueue.New(pool, &pgqueue.Config{TablePrefix: prefix, Schema: schema})
		if err != nil {
			if !errors.Is(err, pgqueue.ErrInvalidConfig) {
				t.Fatalf("New: %v, want ErrInvalidConfig", err)
			}
			return
		}
		if prefix == "" {
			prefix = pgqueue.TablePrefixDefault
		}
		if !safeIdent.MatchString(prefix) || len(prefix)+len("activities_activity_id") > 63 {
			t.Fatalf("accepted TablePrefix %q", prefix)
		}
		if schema != "" && (!safeIdent.MatchString(schema) || len(schema) > 63) {
			t.Fatalf("accepted Schema %q", schema)
		}
		sql, err := q.Schema()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(sql, "\n") {
			if i := strings.Index(line, "TABLE IF NOT EXISTS "); i >= 0 {
				name := strings.Fields(line[i+len("TABLE IF NOT EXISTS "):])[0]
				want := prefix
				if schema != "" {
					want = `"` + schema + `".` + prefix
				}
				if !strings.HasPrefix(name, want) {
					t.Fatalf("table %q outside prefix %q", name, want)
				}
			}
		}
	})
}
