package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fedkit/fedkit/internal/pgtest"
)

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	applied, err := Migrate(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := Migrations()
	if len(applied) != len(ms) || len(ms) == 0 {
		t.Fatalf("applied %v of %d migrations", applied, len(ms))
	}
	again, err := Migrate(ctx, pool)
	if err != nil || len(again) != 0 {
		t.Fatalf("second Migrate applied %v, err %v", again, err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(ms) {
		t.Fatalf("schema_migrations rows = %d, err %v", n, err)
	}
	// The indexes the origin lookup relies on exist and are not unique.
	for _, idx := range []string{"users_origin_username_idx", "users_origin_username_lower_idx"} {
		var unique bool
		err := pool.QueryRow(ctx, `SELECT i.indisunique FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
			WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`, idx).Scan(&unique)
		if err != nil || unique {
			t.Errorf("index %s: unique=%v err=%v", idx, unique, err)
		}
	}
}

func TestMigrationsAreVersioned(t *testing.T) {
	t.Parallel()
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		if m.Version != i+1 {
			t.Errorf("migration %d has version %d: versions must be 1..n without gaps", i, m.Version)
		}
	}
}

func setup(t *testing.T) (*Store, context.Context) {
	t.Helper()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	if _, err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	return New(pool), ctx
}

func TestCursorNeverMovesBack(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	if _, ok, err := s.LoadCursor(ctx, "js"); ok || err != nil {
		t.Fatalf("fresh cursor ok=%v err=%v", ok, err)
	}
	for _, v := range []int64{10, 30, 20} {
		if err := s.SaveCursor(ctx, "js", v); err != nil {
			t.Fatal(err)
		}
	}
	if v, ok, _ := s.LoadCursor(ctx, "js"); !ok || v != 30 {
		t.Fatalf("cursor = %d, want 30", v)
	}
}

func TestClearOriginWritesEmptyNotNull(t *testing.T) {
	t.Parallel()
	const did = "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa"
	for _, k := range []Kind{KindUser, KindCommunity} {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			s, ctx := setup(t)
			var err error
			if k == KindUser {
				err = s.InsertUser(ctx, did, "a.bridge.test", "https://pds.bridge.test")
			} else {
				err = s.InsertCommunity(ctx, did, "c.bridge.test", "c", "https://pds.bridge.test")
			}
			if err != nil {
				t.Fatal(err)
			}
			// Untouched columns are NULL and there is nothing to clear.
			if changed, err := s.ClearOrigin(ctx, k, did); err != nil || changed {
				t.Fatalf("clear of untouched row changed=%v err=%v", changed, err)
			}
			o, u, sw := "lemmy.world", "alice", "lemmy"
			if _, err := s.ApplyProfile(ctx, k, did, Profile{Rev: "1", Origin: Origin{Origin: &o, Username: &u, Software: &sw}}); err != nil {
				t.Fatal(err)
			}
			if changed, err := s.ClearOrigin(ctx, k, did); err != nil || !changed {
				t.Fatalf("clear changed=%v err=%v", changed, err)
			}
			if changed, _ := s.ClearOrigin(ctx, k, did); changed {
				t.Fatal("a second clear reported a change")
			}
			a, err := s.ActorByDID(ctx, did)
			if err != nil {
				t.Fatal(err)
			}
			cols := map[string]*string{"origin": a.Origin.Origin, "url": a.Origin.URL, "software": a.Origin.Software}
			if k == KindUser {
				cols["username"] = a.Origin.Username
			}
			for name, p := range cols {
				if p == nil || *p != "" {
					t.Errorf("%s = %v, want \"\" (a visible clear)", name, p)
				}
			}
		})
	}
}

// TestRedriveLifecycle runs the redrive rules with caller clocks years
// away from the database's: every time the rules compare (next_at, dead_at)
// comes from the caller, so the test passes whatever the calendar says.
func TestRedriveLifecycle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		now  time.Time
	}{
		{"past-2019", time.Date(2019, 3, 1, 12, 0, 0, 0, time.UTC)},
		{"fixed-2026", time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)},
		{"future-2031", time.Date(2031, 7, 1, 12, 0, 0, 0, time.UTC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testRedriveLifecycle(t, tc.now)
		})
	}
}

func testRedriveLifecycle(t *testing.T, now time.Time) {
	s, ctx := setup(t)
	ev := []byte(`{"did":"did:plc:a","time_us":5,"kind":"identity","identity":{"seq":1}}`)
	for range 2 { // a replay of the same event is ignored
		if err := s.Enqueue(ctx, "did:plc:a", 5, "identity", ev, 0, now, "resolve-failed"); err != nil {
			t.Fatal(err)
		}
	}
	if early, _ := s.ClaimDue(ctx, now.Add(-time.Second), time.Minute, 10); len(early) != 0 {
		t.Fatalf("a row due at now was claimed a second early")
	}
	rows, err := s.ClaimDue(ctx, now, time.Minute, 10)
	if err != nil || len(rows) != 1 {
		t.Fatalf("claimed %d rows, err %v", len(rows), err)
	}
	// A claimed row is leased: a second claimer gets nothing until the lease ends.
	if again, _ := s.ClaimDue(ctx, now, time.Minute, 10); len(again) != 0 {
		t.Fatalf("leased row claimed twice")
	}
	if after, _ := s.ClaimDue(ctx, now.Add(time.Minute), time.Minute, 10); len(after) != 1 {
		t.Fatalf("row not claimable once its lease ended: %d rows", len(after))
	}
	dead, err := s.Reschedule(ctx, rows[0].ID, now, now, "resolve-failed", false, 1)
	if err != nil || dead {
		t.Fatalf("free reschedule killed the row: dead=%v err=%v", dead, err)
	}
	dead, err = s.Reschedule(ctx, rows[0].ID, now, now, "resolve-failed", true, 1)
	if err != nil || !dead {
		t.Fatalf("spent budget: dead=%v err=%v", dead, err)
	}
	if live, d, err := s.RedriveStats(ctx); err != nil || live != 0 || d != 1 {
		t.Fatalf("stats live=%d dead=%d err=%v", live, d, err)
	}
	// Retention is measured from the caller's now at death: a day short of
	// it keeps the row, a day past it removes it.
	if err := s.PurgeDead(ctx, now.Add(6*24*time.Hour), 7*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, d, _ := s.RedriveStats(ctx); d != 1 {
		t.Fatal("dead row purged before its retention ended")
	}
	if err := s.PurgeDead(ctx, now.Add(8*24*time.Hour), 7*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, d, _ := s.RedriveStats(ctx); d != 0 {
		t.Fatal("dead row outlived its retention")
	}
}

func TestActorByHandleIsCaseInsensitive(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	if err := s.InsertUser(ctx, "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", "alice.bridge.test", ""); err != nil {
		t.Fatal(err)
	}
	if a, err := s.ActorByHandle(ctx, "ALICE.bridge.test"); err != nil || a.DID != "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa" {
		t.Fatalf("a=%v err=%v", a, err)
	}
	if _, err := s.ActorByHandle(ctx, "bob.bridge.test"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
}

// TestRedriveKeepsEventBytes: an event is stored for redrive exactly as
// received, even when it holds what jsonb refuses (a \u0000 escape) or
// PostgreSQL text refuses (bytes that are not UTF-8), both of which JSON
// decoding accepts. Otherwise the enqueue fails and the consumer, which
// retries a failed enqueue, stalls on that one event.
func TestRedriveKeepsEventBytes(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for i, ev := range [][]byte{
		[]byte(`{"did":"did:plc:a","commit":{"record":{"text":"he\u0000llo"}}}`),
		[]byte("{\"did\":\"did:plc:a\",\"commit\":{\"record\":{\"text\":\"\xff\xfe\"}}}"),
		[]byte(`{"b":1,  "a":2}`),
	} {
		did := fmt.Sprintf("did:plc:%024d", i)
		if err := s.Enqueue(ctx, did, 1, "commit", ev, 0, now, "x"); err != nil {
			t.Fatalf("Enqueue %q: %v", ev, err)
		}
		rows, err := s.ClaimDue(ctx, now, time.Minute, 10)
		if err != nil || len(rows) != 1 || !bytes.Equal(rows[0].Event, ev) {
			t.Fatalf("claimed %+v, %v; want the event byte for byte", rows, err)
		}
		if err := s.Retire(ctx, rows[0].ID); err != nil {
			t.Fatal(err)
		}
	}
}
