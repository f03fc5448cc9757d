package pgqueue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
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
		_ = q.Notify(ctx, func() {
			select {
			case wake <- struct{}{}:
			default:
			}
		})
	}()
	for range wake {
		jobs, err := q.Claim(ctx, deliver.ClaimOpts{Now: time.Now(), Lease: time.Minute, Limit: 16})
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
