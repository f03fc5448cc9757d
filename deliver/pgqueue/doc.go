// Package pgqueue is a driver.Queue in PostgreSQL, so deliveries survive a
// crash and several processes can work one queue.
//
// The Queue is built from a *pgxpool.Pool the caller owns. Migrate creates
// its tables, or upgrades tables an earlier version made, from migrations
// embedded in the package; Schema returns the same SQL for those who apply
// it with their own tool. TablePrefix and Schema let several deployments
// share a database.
//
// A send stores its activity once, in the activities table, and one row
// per inbox in the jobs table, written with COPY for a large fan-out.
// Claims take rows with FOR UPDATE SKIP LOCKED under a lease and a fencing
// token, so a worker that dies has its jobs come back when the lease
// lapses, and one that finishes late cannot overwrite a job claimed again.
// Lanes, ordering keys, deadlines and attempt limits are enforced in SQL;
// per-tag counters survive the jobs they count. Concurrent Finish calls are
// grouped into one statement, and claims and outcomes commit asynchronously
// unless Config.DurableClaims is set: a database crash can then only cause
// a delivery to be sent again, never lost. Queue implements
// driver.Notifier, so a Deliverer's Run wakes on LISTEN/NOTIFY when any
// process enqueues or work comes due, polling as a fallback; Notify holds
// one pool connection while Run runs. Depth counts what waits in each
// lane, for a status page.
//
// A database that cannot be reached, is shutting down or starting up, or
// drops the connection makes every method fail with an error matching
// driver.ErrQueueUnavailable (keeping pgx's error): Enqueue stored
// nothing and may be retried. Nothing claimed is lost across a crash: a
// delivery in flight comes back when its lease ends.
//
// It needs PostgreSQL 12 or newer: claims run from a cached plan, forced
// with plan_cache_mode for their transaction only.
//
//	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
//	if err != nil { ... }
//	defer pool.Close()
//	q, err := pgqueue.New(pool, &pgqueue.Config{TablePrefix: "myapp_delivery_"})
//	if err != nil { ... }
//	if err := q.Migrate(ctx); err != nil { ... }
//	d, err := deliver.New(q, keys, httpClient, nil)
//	go d.Run(ctx)
//
//	// Any process, later:
//	s, err := q.Status(ctx, "post-42")                        // a tagged batch
//	n, err := q.Drop(ctx, driver.DropFilter{ActorID: actor}) // an account deleted
//	depth, err := q.Depth(ctx)                                // jobs per lane
//
// Clocks: the Queue keeps none. Every time it stores or compares (due_at,
// lease_until, retry_at, deadline, enqueued_at) is the caller's, the
// Deliverer's Config.Now handed over in ClaimOpts.Now, Envelope.EnqueuedAt
// and Outcome.RetryAt, and Notify measures the wait for the next due job
// on the clock the Deliverer passes it. No statement reads the database's
// now(); only the migrations table's applied_at takes it, for
// information.
package pgqueue
