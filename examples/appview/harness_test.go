package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"

	"github.com/fedkit/fedkit/examples/appview/internal/jetstream"
	"github.com/fedkit/fedkit/examples/appview/internal/store"
	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
	"github.com/fedkit/fedkit/internal/pgtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	bridgeHost = "pds.bridge.test"
	bridgePDS  = "https://pds.bridge.test"
	otherPDS   = "https://pds.elsewhere.test"
)

var didSeq atomic.Int64

// plcDID makes a valid did:plc from a short name (base32 letters only),
// unique per call: the advisory lock is database-wide, so parallel tests
// must not share DIDs.
func plcDID(name string) string {
	n := didSeq.Add(1)
	var suffix []byte
	for ; n > 0; n /= 32 {
		suffix = append(suffix, "abcdefghijklmnopqrstuvwxyz234567"[n%32])
	}
	id := (name + "z" + string(suffix) + strings.Repeat("a", 24))[:24]
	return "did:plc:" + id
}

// spyDB wraps the AppView's database for tests: it counts the statements
// the AppView sends and, when fail is set, fails the ones fail returns an
// error for (before they reach inner).
type spyDB struct {
	inner store.Querier
	fail  func(sql string) error
	n     atomic.Int64
}

func (d *spyDB) check(sql string) error {
	d.n.Add(1)
	if d.fail == nil {
		return nil
	}
	return d.fail(sql)
}

func (d *spyDB) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := d.check(sql); err != nil {
		return pgconn.CommandTag{}, err
	}
	return d.inner.Exec(ctx, sql, args...)
}

func (d *spyDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := d.check(sql); err != nil {
		return nil, err
	}
	return d.inner.Query(ctx, sql, args...)
}

func (d *spyDB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := d.check(sql); err != nil {
		return errRow{err}
	}
	return d.inner.QueryRow(ctx, sql, args...)
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// clock is a settable clock for the redrive schedule.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type harness struct {
	t        *testing.T
	ctx      context.Context
	connStr  string
	pool     *pgxpool.Pool
	lockPool *pgxpool.Pool
	db       *spyDB
	net      *identitytest.Network
	res      *identity.HTTPResolver
	clock    *clock
	cfg      Config
	logs     *logBuffer // the app's log
	app      *app
	// resolveTimeout, when set before newApp, replaces the 5 s bound on
	// each identity resolution.
	resolveTimeout time.Duration
}

// logBuffer collects log output from concurrent writers.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func setup(t *testing.T) *harness {
	t.Helper()
	ctx := context.Background()
	cs := pgtest.ConnString(t)
	pool, err := pgxpool.New(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	lockPool, err := openLockPool(ctx, cs, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lockPool.Close)
	if err := migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	h := &harness{
		t: t, ctx: ctx, connStr: cs, pool: pool, lockPool: lockPool,
		db:    &spyDB{inner: pool},
		logs:  &logBuffer{},
		net:   identitytest.NewNetwork(t),
		clock: &clock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)},
		cfg: Config{
			DatabaseURL: cs, TrustedHosts: []string{bridgeHost}, PLCURL: "https://plc.test",
			RedriveInterval: RedriveIntervalDefault, Lanes: 4,
		},
	}
	h.res = h.net.Resolver(t)
	h.app = h.newApp(h.db)
	return h
}

// testRetryDelays replace the in-line retry waits (200 ms, 1 s, 3 s): a
// test that hits a transient failure must not sleep 4 s on it.
var testRetryDelays = []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}

// newApp wires an app over db (the AppView tables) with the harness's
// network, clock, a short lock wait and short in-line retries.
func (h *harness) newApp(db store.Querier) *app {
	h.t.Helper()
	a, err := newApp(appDeps{
		Pool: h.pool, LockPool: h.lockPool, Resolver: h.res, DB: db, Now: h.clock.Now,
		Logger:   slog.New(slog.NewTextHandler(h.logs, nil)),
		LockWait: 300 * time.Millisecond, InlineRetryDelays: testRetryDelays,
		ResolveTimeout: h.resolveTimeout,
	}, h.cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	return a
}

func (h *harness) exec(sql string, args ...any) {
	h.t.Helper()
	if _, err := h.pool.Exec(h.ctx, sql, args...); err != nil {
		h.t.Fatalf("%s: %v", sql, err)
	}
}

func (h *harness) addUser(did, handle, pds string) {
	h.t.Helper()
	h.exec(`INSERT INTO users (did, handle, pds_url) VALUES ($1, $2, $3)`, did, handle, pds)
}

func (h *harness) addCommunity(did, handle, pds string) {
	h.t.Helper()
	h.exec(`INSERT INTO communities (did, handle, name, pds_url) VALUES ($1, $2, $3, $4)`, did, handle, "c", pds)
}

// setOrigin stores origin fields directly (as an earlier admitted profile would).
func (h *harness) setOrigin(did, origin, username, url, software string) {
	h.t.Helper()
	h.exec(`UPDATE users SET origin = $2, origin_username = $3, origin_url = $4, origin_software = $5 WHERE did = $1`,
		did, origin, username, url, software)
}

func (h *harness) actor(did string) *store.Actor {
	h.t.Helper()
	a, err := h.app.store.ActorByDID(h.ctx, did)
	if err != nil {
		h.t.Fatalf("actor %s: %v", did, err)
	}
	return a
}

func (h *harness) exists(did string) bool {
	h.t.Helper()
	k, err := h.app.store.KindOf(h.ctx, did)
	if err != nil {
		h.t.Fatal(err)
	}
	return k != store.KindNone
}

func (h *harness) redriveRows(did string) (n, attempts int, code string, dead bool) {
	h.t.Helper()
	err := h.pool.QueryRow(h.ctx, `SELECT count(*), COALESCE(max(attempts), 0), COALESCE(max(last_error), ''),
		COALESCE(bool_or(dead_at IS NOT NULL), false) FROM redrive WHERE did = $1`, did).Scan(&n, &attempts, &code, &dead)
	if err != nil {
		h.t.Fatal(err)
	}
	return n, attempts, code, dead
}

// handle runs one frame through the live path (Ingester.Handle): applied,
// dropped or queued for redrive.
func (h *harness) handle(frame []byte) {
	h.t.Helper()
	f, err := jetstream.Parse(frame)
	if err != nil {
		h.t.Fatalf("parse %s: %v", frame, err)
	}
	if err := h.app.ingester.Handle(h.ctx, f); err != nil {
		h.t.Fatalf("handle: %v", err)
	}
}

// Frame generators, in the documented v1 shapes.

var timeUS atomic.Int64

func init() { timeUS.Store(1_780_000_000_000_000) }

func nextTime() int64 { return timeUS.Add(1) }

func identityFrame(did string, seq int64) []byte {
	return fmt.Appendf(nil, `{"did":%q,"time_us":%d,"kind":"identity","identity":{"did":%q,"seq":%d,"time":"2026-11-29T12:00:00.000Z"}}`,
		did, nextTime(), did, seq)
}

func accountFrame(did string, seq int64, active bool, status string) []byte {
	acc := map[string]any{"active": active, "did": did, "seq": seq, "time": "2026-11-29T12:00:00.000Z"}
	if status != "" {
		acc["status"] = status
	}
	b, _ := json.Marshal(map[string]any{"did": did, "time_us": nextTime(), "kind": "account", "account": acc})
	return b
}

func commitFrame(did, collection, rkey, rev, op string, record map[string]any) []byte {
	c := map[string]any{"rev": rev, "operation": op, "collection": collection, "rkey": rkey}
	if op != "delete" {
		c["record"] = record
		c["cid"] = "bafyreigeneratedfortests" + rev
	}
	b, _ := json.Marshal(map[string]any{"did": did, "time_us": nextTime(), "kind": "commit", "commit": c})
	return b
}

func profileFrame(did, rev string, fields map[string]any) []byte {
	rec := map[string]any{"$type": "app.bsky.actor.profile", "displayName": "Name " + rev}
	for k, v := range fields {
		rec[k] = v
	}
	return commitFrame(did, "app.bsky.actor.profile", "self", rev, "update", rec)
}

func bridgedFields(username, host string) map[string]any {
	return map[string]any{
		"origin": host, "originUsername": username,
		"originUrl": "https://" + host + "/u/" + username, "originSoftware": "lemmy",
	}
}

func deref(p *string) string {
	if p == nil {
		return "<NULL>"
	}
	return *p
}

func originOf(a *store.Actor) [4]string {
	return [4]string{deref(a.Origin.Origin), deref(a.Origin.Username), deref(a.Origin.URL), deref(a.Origin.Software)}
}

var cleared = [4]string{"", "", "", ""}
