package pgstore_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/pgstore"
)

func ExampleNewLock() {
	ctx := context.Background()
	// A pool of its own, capped at 8: never the application's pool.
	pc, err := pgstore.LockPoolConfig("postgres://app@db.internal/app", pgstore.LockPoolSizeDefault)
	if err != nil {
		panic(err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		panic(err)
	}
	defer pool.Close()
	lock, err := pgstore.NewLock(pool, nil)
	if err != nil {
		panic(err)
	}
	err = lock.WithLock(ctx, "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", func(ctx context.Context) error {
		return nil // re-read and write the handle here
	})
	fmt.Println(err)
}

func ExampleNewCacheStore() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://app@db.internal/app")
	if err != nil {
		panic(err)
	}
	defer pool.Close()
	store, err := pgstore.NewCacheStore(pool, &pgstore.CacheConfig{Table: "identity_cache"})
	if err != nil {
		panic(err)
	}
	if err := store.Migrate(ctx); err != nil {
		panic(err)
	}
	var inner identity.Resolver // an *identity.HTTPResolver
	cache, _ := identity.NewCache(inner, store, nil)
	_ = cache
}

func ExampleLockKey() {
	fmt.Println(pgstore.LockKey(pgstore.NamespaceDefault, "did:plc:abc"))
	fmt.Println(pgstore.LockKey(pgstore.NamespaceDefault, "did:plc:mbuadp4xzlbmc2ncqp3pmtox"))
	// Output:
	// 6436504481215310422
	// -5881169076914402716
}

func ExampleLockPoolConfig() {
	// A sweep sizes its lock pool to its concurrency.
	pc, err := pgstore.LockPoolConfig("postgres://app@db.internal/app", 16)
	fmt.Println(pc.MaxConns, err)
	// Output: 16 <nil>
}
