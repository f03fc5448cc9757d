package pgqueue_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/pgqueue"
)

// A Deliverer whose queue is in Postgres; several processes can run this
// against one database.
func ExampleNew() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	q, err := pgqueue.New(pool, &pgqueue.Config{TablePrefix: "myapp_delivery_"})
	if err != nil {
		log.Fatal(err)
	}
	if err := q.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	c, err := client.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	d, err := deliver.New(q, staticKeys{}, c, nil)
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = d.Run(ctx) }()
}

// Migrate on every start: it applies only what is missing, and processes
// starting together wait for each other.
func ExampleQueue_Migrate() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	q, err := pgqueue.New(pool, &pgqueue.Config{Schema: "deliveries"})
	if err != nil {
		log.Fatal(err)
	}
	if err := q.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
}

// Schema gives the SQL to apply with a migration tool of your own.
func ExampleQueue_Schema() {
	// pgxpool.New does not connect until the pool is used.
	pool, err := pgxpool.New(context.Background(), "postgres://localhost/app")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	q, err := pgqueue.New(pool, &pgqueue.Config{TablePrefix: "tenant_a_"})
	if err != nil {
		log.Fatal(err)
	}
	sql, err := q.Schema()
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(sql, "\n") {
		if strings.HasPrefix(line, "CREATE TABLE") || strings.HasPrefix(line, "ALTER TABLE") {
			fmt.Println(line)
		}
	}
	// Output:
	// CREATE TABLE IF NOT EXISTS tenant_a_activities (
	// CREATE TABLE IF NOT EXISTS tenant_a_jobs (
	// CREATE TABLE IF NOT EXISTS tenant_a_counts (
	// ALTER TABLE tenant_a_jobs ADD COLUMN IF NOT EXISTS ordering_key text;
	// ALTER TABLE tenant_a_jobs SET (fillfactor = 70);
	// ALTER TABLE tenant_a_activities ADD COLUMN IF NOT EXISTS trace_parent text NOT NULL DEFAULT '';
}

// Notify wakes a worker when another process enqueues, or when a retry
// comes due, instead of waiting for its next poll.
func ExampleQueue_Notify() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	q, err := pgqueue.New(pool, nil)
	if err != nil {
		log.Fatal(err)
	}
	wake := make(chan struct{}, 1)
	go func() {
		_ = q.Notify(ctx, time.Now, func() {
			select {
			case wake <- struct{}{}:
			default:
			}
		})
	}()
	for range wake {
		jobs, err := q.Claim(ctx, driver.ClaimOpts{Now: time.Now(), Lease: time.Minute, Limit: 16})
		if err != nil {
			log.Print(err)
			continue
		}
		_ = jobs // work them, then Finish each
	}
}

// Sweep removes sends whose deliveries are all done; Claim does it once a
// SweepInterval, so this is for maintenance jobs.
func ExampleQueue_Sweep() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	q, err := pgqueue.New(pool, nil)
	if err != nil {
		log.Fatal(err)
	}
	n, err := q.Sweep(ctx)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("removed %d finished sends", n)
}

// A status page's queue section: deliveries waiting in each lane, across
// every process sharing the queue.
func ExampleQueue_Depth() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	q, err := pgqueue.New(pool, nil)
	if err != nil {
		log.Fatal(err)
	}
	depth, err := q.Depth(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("priority %d, normal %d, low %d\n",
		depth[driver.LanePriority], depth[driver.LaneNormal], depth[driver.LaneLow])
}

// Following a tagged batch; the counts outlive the jobs, so a finished
// batch still reports what became of it.
func ExampleQueue_Status() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	q, err := pgqueue.New(pool, nil)
	if err != nil {
		log.Fatal(err)
	}
	s, err := q.Status(ctx, "post-42")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d pending, %d delivered, %d given up, done=%v\n", s.Pending, s.Delivered, s.GaveUp, s.Done())
}

// An account deleted: drop everything still queued from its actor, in
// every process's view at once.
func ExampleQueue_Drop() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	q, err := pgqueue.New(pool, nil)
	if err != nil {
		log.Fatal(err)
	}
	n, err := q.Drop(ctx, driver.DropFilter{ActorID: "https://a.example/users/alice"})
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("dropped %d deliveries", n)
}

// The queue used without a Deliverer: one send stored once for all its
// inboxes, then claimed, worked and finished by a worker of your own.
// Deliverer.SendBatch and Deliverer.Run do this for you.
func ExampleQueue_Claim() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	q, err := pgqueue.New(pool, nil)
	if err != nil {
		log.Fatal(err)
	}
	err = q.Enqueue(ctx, &driver.Envelope{
		KeyID:      "https://a.example/users/alice#main-key",
		ActivityID: "https://a.example/activities/1",
		Body:       []byte(`{"id":"https://a.example/activities/1","type":"Create"}`),
		Inboxes:    []string{"https://b.example/inbox", "https://c.example/inbox"},
		EnqueuedAt: time.Now(),
		Tag:        "post-1",
	})
	if err != nil {
		log.Fatal(err)
	}
	jobs, err := q.Claim(ctx, driver.ClaimOpts{Now: time.Now(), Lease: time.Minute, Limit: 16})
	if err != nil {
		log.Fatal(err)
	}
	for _, j := range jobs {
		// ... POST j.Envelope.Body to j.Inbox ...
		err := q.Finish(ctx, j.Ref(), driver.Outcome{Result: driver.ResultDelivered, Attempts: j.Attempts + 1})
		if errors.Is(err, driver.ErrLeaseLost) {
			continue // the lease lapsed and another worker owns the job now
		}
		if err != nil {
			log.Print(err)
		}
	}
}
