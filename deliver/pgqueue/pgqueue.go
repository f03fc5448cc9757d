package pgqueue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/deliver/driver"
)

// Defaults for Config.
const (
	// TablePrefixDefault begins every table's name.
	TablePrefixDefault = "fedkit_delivery_"
	// EnvelopeCacheDefault is how many sends' envelopes a Queue keeps in
	// memory, so claiming jobs of one large send reads its body once.
	EnvelopeCacheDefault = 1024
	// CopyThresholdDefault is the fan-out above which Enqueue uses COPY
	// rather than one multi-row INSERT.
	CopyThresholdDefault = 512
	// SweepIntervalDefault is how often Claim removes sends with no jobs left.
	SweepIntervalDefault = time.Minute
	// PollIntervalDefault is how often Notify wakes when nothing is heard:
	// the Deliverer's own poll (deliver.PollIntervalDefault).
	PollIntervalDefault = time.Second
	// FinishBatchDefault is the most outcomes one Finish statement records.
	FinishBatchDefault = 1000
)

// counterShards spreads a tag's counters over several rows; see the counts
// table in migrations/001_create.sql.
const counterShards = 8

// Config configures a Queue. The zero value is usable.
type Config struct {
	// Schema, when set, is the Postgres schema holding the tables; it must
	// exist. Defaults to "" (the connection's search_path).
	Schema string
	// TablePrefix begins every table's name, so several deployments can share
	// a schema. Lower-case letters, digits and underscores. Defaults to
	// TablePrefixDefault.
	TablePrefix string
	// EnvelopeCache bounds the envelopes kept in memory. Defaults to
	// EnvelopeCacheDefault.
	EnvelopeCache int
	// CopyThreshold is the fan-out above which Enqueue uses COPY. Defaults
	// to CopyThresholdDefault.
	CopyThreshold int
	// SweepInterval is how often Claim deletes sends whose jobs are all
	// done. Defaults to SweepIntervalDefault.
	SweepInterval time.Duration
	// PollInterval is how often Notify wakes its caller when no notification
	// comes. Defaults to PollIntervalDefault.
	PollInterval time.Duration
	// FinishBatch caps how many outcomes one statement records when Finish
	// is called concurrently. Defaults to FinishBatchDefault.
	FinishBatch int
	// DurableClaims makes Claim and Finish wait for their commit to reach
	// disk. Defaults to false: they commit with synchronous_commit off, so
	// a database crash can forget the last moments of claims and outcomes
	// (and so reissue a fencing token), and those deliveries may be sent
	// again; none is lost. Enqueue and Drop always commit durably.
	DurableClaims bool
	// Logger receives logs. Defaults to discarding.
	Logger *slog.Logger
}

var (
	// ErrInvalidConfig is wrapped by New for a Config it cannot use.
	ErrInvalidConfig = errors.New("pgqueue: invalid config")
	// ErrNotMigrated is returned when the queue's tables or columns are
	// missing: call Migrate, or apply Schema.
	ErrNotMigrated = errors.New("pgqueue: schema not migrated")
)

// Queue is a driver.Queue in PostgreSQL. It is safe for concurrent use,
// also by many processes sharing one database.
type Queue struct {
	pool      *pgxpool.Pool
	cfg       Config
	log       *slog.Logger
	prefix    string // table prefix, unqualified
	qualified string // schema-qualified table prefix
	channel   string // LISTEN/NOTIFY channel, before channelSQL finishes it
	sql       statements

	envMu sync.Mutex
	envs  map[int64]*driver.Envelope

	sweepMu   sync.Mutex
	lastSweep time.Time

	fin finisher
}

var (
	_ driver.Queue        = (*Queue)(nil)
	_ driver.Notifier     = (*Queue)(nil)
	_ driver.DepthCounter = (*Queue)(nil)
)

var identRE = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// New returns a Queue on pool, which the caller owns and closes. It does not
// connect: call Migrate (or apply Schema) before use. A nil cfg means
// defaults.
func New(pool *pgxpool.Pool, cfg *Config) (*Queue, error) {
	if pool == nil {
		return nil, fmt.Errorf("%w: nil pool", ErrInvalidConfig)
	}
	var c Config
	if cfg != nil {
		c = *cfg
	}
	if c.TablePrefix == "" {
		c.TablePrefix = TablePrefixDefault
	}
	if c.EnvelopeCache <= 0 {
		c.EnvelopeCache = EnvelopeCacheDefault
	}
	if c.CopyThreshold <= 0 {
		c.CopyThreshold = CopyThresholdDefault
	}
	if c.SweepInterval <= 0 {
		c.SweepInterval = SweepIntervalDefault
	}
	if c.PollInterval <= 0 {
		c.PollInterval = PollIntervalDefault
	}
	if c.FinishBatch <= 0 {
		c.FinishBatch = FinishBatchDefault
	}
	if !identRE.MatchString(c.TablePrefix) {
		return nil, fmt.Errorf("%w: TablePrefix %q: use lower-case letters, digits and underscores", ErrInvalidConfig, c.TablePrefix)
	}
	// The longest name built from it, an index name, must fit in 63 bytes.
	if len(c.TablePrefix)+len("activities_activity_id") > 63 {
		return nil, fmt.Errorf("%w: TablePrefix %q is too long", ErrInvalidConfig, c.TablePrefix)
	}
	if c.Schema != "" && (!identRE.MatchString(c.Schema) || len(c.Schema) > 63) {
		return nil, fmt.Errorf("%w: Schema %q: use lower-case letters, digits and underscores", ErrInvalidConfig, c.Schema)
	}
	q := &Queue{pool: pool, cfg: c, log: c.Logger, prefix: c.TablePrefix, qualified: c.TablePrefix}
	if q.log == nil {
		q.log = slog.New(slog.DiscardHandler)
	}
	q.channel = c.TablePrefix + "wake"
	if c.Schema != "" {
		q.qualified = `"` + c.Schema + `".` + c.TablePrefix
		q.channel = c.Schema + "_" + q.channel
	}
	if len(q.channel) > 63 {
		q.channel = q.channel[:63]
	}
	q.sql = q.prepareSQL()
	return q, nil
}

// Enqueue implements driver.Queue: the body once, then one job per inbox,
// by COPY for a large fan-out, in one transaction that also notifies
// listening workers.
func (q *Queue) Enqueue(ctx context.Context, e *driver.Envelope) error {
	if len(e.Inboxes) == 0 {
		return nil
	}
	var deadline *time.Time
	if !e.Deadline.IsZero() {
		deadline = &e.Deadline
	}
	var okey *string
	if e.OrderingKey != "" {
		okey = &e.OrderingKey
	}
	err := pgx.BeginFunc(ctx, q.pool, func(tx pgx.Tx) error {
		var id int64
		err := tx.QueryRow(ctx, q.sql.insertActivity, e.KeyID, e.ActivityID, e.ActorID, e.Tag, e.Body,
			deadline, e.MaxAttempts, e.SynchronizeCollection, e.EnqueuedAt, e.TraceParent).Scan(&id)
		if err != nil {
			return err
		}
		if len(e.Inboxes) <= q.cfg.CopyThreshold {
			_, err = tx.Exec(ctx, q.sql.insertJobs, id, e.Inboxes, int16(e.Lane), e.EnqueuedAt, okey)
		} else {
			_, err = tx.CopyFrom(ctx, q.tableName("jobs"),
				[]string{"activity", "inbox", "lane", "due_at", "ordering_key"},
				&jobRows{id: id, inboxes: e.Inboxes, lane: int16(e.Lane), due: e.EnqueuedAt, okey: okey, i: -1})
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "SELECT pg_notify("+q.channelSQL()+", '')", q.channel)
		return err
	})
	return mapError("enqueue", err)
}

// channelSQL is the SQL naming the queue's LISTEN/NOTIFY channel from $1,
// q.channel. Channels are global to a database while tables resolve through
// search_path, so without a Schema the channel carries a digest of the
// schema the tables resolve to: deployments kept apart by search_path do
// not wake each other. Enqueue and Notify both name it this way.
func (q *Queue) channelSQL() string {
	if q.cfg.Schema != "" {
		return "$1::text"
	}
	return "left($1::text || '_' || left(md5(coalesce(current_schema(), '')), 12), 63)"
}

func (q *Queue) tableName(t string) pgx.Identifier {
	if q.cfg.Schema != "" {
		return pgx.Identifier{q.cfg.Schema, q.prefix + t}
	}
	return pgx.Identifier{q.prefix + t}
}

// jobRows streams a fan-out's rows to COPY without building them all first.
type jobRows struct {
	id      int64
	inboxes []string
	lane    int16
	due     time.Time
	okey    *string
	i       int
}

func (r *jobRows) Next() bool { r.i++; return r.i < len(r.inboxes) }
func (r *jobRows) Values() ([]any, error) {
	return []any{r.id, r.inboxes[r.i], r.lane, r.due, r.okey}, nil
}
func (r *jobRows) Err() error { return nil }

// Claim implements driver.Queue with FOR UPDATE SKIP LOCKED: concurrent
// claimers, in this process or others, pass over each other's rows.
func (q *Queue) Claim(ctx context.Context, opts driver.ClaimOpts) ([]*driver.Job, error) {
	if opts.Limit <= 0 {
		return nil, nil
	}
	q.maybeSweep(ctx, opts.Now)
	leaseUntil := opts.Now.Add(opts.Lease)
	type claimed struct {
		id, token, activity int64
		inbox               string
		attempts            int32
		lane                int16
		okey                *string
		due                 time.Time
	}
	var cs []claimed
	err := q.query(ctx, q.sql.claim, []any{opts.Now, leaseUntil, opts.Limit}, func(rows pgx.Rows) error {
		var c claimed
		if err := rows.Scan(&c.id, &c.token, &c.activity, &c.inbox, &c.attempts, &c.lane, &c.okey, &c.due); err != nil {
			return err
		}
		cs = append(cs, c)
		return nil
	})
	if err != nil {
		return nil, mapError("claim", err)
	}
	if len(cs) == 0 {
		return nil, nil
	}
	// Rows come back in no particular order; hand them out in claim order.
	slices.SortFunc(cs, func(a, b claimed) int {
		return cmp.Or(cmp.Compare(a.lane, b.lane), a.due.Compare(b.due), cmp.Compare(a.id, b.id))
	})

	want := make(map[int64]claimed)
	for _, c := range cs {
		want[c.activity] = c
	}
	envs, err := envelopesFor(q, ctx, want, func(c claimed) (driver.Lane, string) {
		okey := ""
		if c.okey != nil {
			okey = *c.okey
		}
		return driver.Lane(c.lane), okey
	})
	if err != nil {
		// The jobs stay leased and come back when the lease lapses.
		return nil, err
	}
	jobs := make([]*driver.Job, 0, len(cs))
	for _, c := range cs {
		if envs[c.activity] == nil {
			continue // dropped since the claim: its job is gone too
		}
		jobs = append(jobs, &driver.Job{ID: c.id, Token: c.token, LeaseUntil: leaseUntil, Inbox: c.inbox,
			Attempts: int(c.attempts), Envelope: envs[c.activity]})
	}
	return jobs, nil
}

// envelopesFor returns the envelopes of the given sends, from the cache or
// in one query for those missing; a send dropped meanwhile is left out.
// Envelopes carry no Inboxes: each job names its own.
func envelopesFor[C any](q *Queue, ctx context.Context, want map[int64]C, meta func(C) (driver.Lane, string)) (map[int64]*driver.Envelope, error) {
	out := make(map[int64]*driver.Envelope, len(want))
	var missing []int64
	q.envMu.Lock()
	for id := range want {
		if e, ok := q.envs[id]; ok {
			out[id] = e
		} else {
			missing = append(missing, id)
		}
	}
	q.envMu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	rows, err := q.pool.Query(ctx, q.sql.selectActivities, missing)
	if err != nil {
		return nil, mapError("claim", err)
	}
	defer rows.Close()
	loaded := make(map[int64]*driver.Envelope, len(missing))
	for rows.Next() {
		var (
			id       int64
			e        driver.Envelope
			deadline *time.Time
			maxAtt   int32
		)
		if err := rows.Scan(&id, &e.KeyID, &e.ActivityID, &e.ActorID, &e.Tag, &e.Body, &deadline, &maxAtt,
			&e.SynchronizeCollection, &e.EnqueuedAt, &e.TraceParent); err != nil {
			return nil, mapError("claim", err)
		}
		if deadline != nil {
			e.Deadline = *deadline
		}
		e.MaxAttempts = int(maxAtt)
		e.Lane, e.OrderingKey = meta(want[id])
		loaded[id] = &e
		out[id] = &e
	}
	if err := rows.Err(); err != nil {
		return nil, mapError("claim", err)
	}
	q.envMu.Lock()
	if q.envs == nil || len(q.envs)+len(loaded) > q.cfg.EnvelopeCache {
		q.envs = make(map[int64]*driver.Envelope)
	}
	for id, e := range loaded {
		q.envs[id] = e
	}
	q.envMu.Unlock()
	return out, nil
}

// Status implements driver.Queue: Pending counts the tag's jobs in the
// queue, claimed ones included; the other counts are kept per tag and
// outlive the jobs and sends they count.
func (q *Queue) Status(ctx context.Context, tag string) (driver.BatchStatus, error) {
	var s driver.BatchStatus
	var pending, delivered, failed, gaveUp, skipped, dropped int64
	err := q.pool.QueryRow(ctx, q.sql.status, tag).Scan(&pending, &delivered, &failed, &gaveUp, &skipped, &dropped)
	if err != nil {
		return s, mapError("status", err)
	}
	s = driver.BatchStatus{Pending: int(pending), Delivered: int(delivered), Failed: int(failed),
		GaveUp: int(gaveUp), Skipped: int(skipped), Dropped: int(dropped)}
	return s, nil
}

// Depth returns how many deliveries wait in each lane, across every
// process sharing the queue: due, scheduled for a retry or claimed, as
// Status counts a batch's Pending. Every lane is in the map, zero when
// empty. It counts rows, so a status page should not call it in a tight
// loop on a queue of millions.
func (q *Queue) Depth(ctx context.Context) (map[driver.Lane]int, error) {
	out := map[driver.Lane]int{driver.LanePriority: 0, driver.LaneNormal: 0, driver.LaneLow: 0}
	rows, err := q.pool.Query(ctx, q.sql.depth)
	if err != nil {
		return nil, mapError("depth", err)
	}
	defer rows.Close()
	for rows.Next() {
		var lane int16
		var n int64
		if err := rows.Scan(&lane, &n); err != nil {
			return nil, mapError("depth", err)
		}
		out[driver.Lane(lane)] = int(n)
	}
	if err := rows.Err(); err != nil {
		return nil, mapError("depth", err)
	}
	return out, nil
}

// Drop implements driver.Queue: it deletes the jobs, claimed or not, counts
// them as dropped under their tags, and deletes sends left with no jobs.
func (q *Queue) Drop(ctx context.Context, f driver.DropFilter) (int, error) {
	if f.IsZero() {
		return 0, driver.ErrEmptyDropFilter
	}
	var n int64
	err := pgx.BeginFunc(ctx, q.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, q.sql.drop, f.ActivityID, f.ActorID, f.Tag).Scan(&n); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, q.sql.dropActivities, f.ActivityID, f.ActorID, f.Tag)
		return err
	})
	if err != nil {
		return 0, mapError("drop", err)
	}
	return int(n), nil
}

// maybeSweep deletes sends whose jobs are all gone, at most once per
// SweepInterval per Queue. A send is inserted with its jobs in one
// transaction, so one seen without jobs is finished, not half-written.
func (q *Queue) maybeSweep(ctx context.Context, now time.Time) {
	q.sweepMu.Lock()
	if !q.lastSweep.IsZero() && now.Sub(q.lastSweep) < q.cfg.SweepInterval && now.After(q.lastSweep) {
		q.sweepMu.Unlock()
		return
	}
	q.lastSweep = now
	q.sweepMu.Unlock()
	if _, err := q.pool.Exec(ctx, q.sql.sweep); err != nil {
		q.log.Warn("pgqueue: sweep failed", "err", mapError("sweep", err))
	}
}

// Sweep deletes every send whose jobs are all done. Claim does it on its
// own every SweepInterval; Sweep is for tests and maintenance jobs.
func (q *Queue) Sweep(ctx context.Context) (int, error) {
	tag, err := q.pool.Exec(ctx, q.sql.sweep)
	if err != nil {
		return 0, mapError("sweep", err)
	}
	return int(tag.RowsAffected()), nil
}

// query runs sql in one round trip and calls each for every row. Its
// implicit transaction first sets plan_cache_mode to force_generic_plan:
// the claim and finish statements are written so that their generic plans
// are the ones wanted, and Postgres would otherwise plan the claim afresh
// every time (its LIMIT makes each custom plan look cheaper). Unless
// DurableClaims is set, it also commits with synchronous_commit off.
// set_config's local flag confines both to this transaction, leaving the
// caller's pooled connection as it was.
func (q *Queue) query(ctx context.Context, sql string, args []any, each func(pgx.Rows) error) error {
	b := &pgx.Batch{}
	if q.cfg.DurableClaims {
		b.Queue("SELECT set_config('plan_cache_mode', 'force_generic_plan', true)")
	} else {
		b.Queue("SELECT set_config('plan_cache_mode', 'force_generic_plan', true), set_config('synchronous_commit', 'off', true)")
	}
	b.Queue(sql, args...)
	br := q.pool.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return err
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	return br.Close()
}
