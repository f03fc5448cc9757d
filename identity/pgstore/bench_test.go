package pgstore_test

import (
	"context"
	"crypto/rand"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
	"github.com/fedkit/fedkit/internal/pgtest"
	"github.com/fedkit/fedkit/origin"
)

// benchStore is the minimal application store: one table, one indexed read.
type benchStore struct{ pool *pgxpool.Pool }

const benchLookup = `SELECT handle FROM bench_users WHERE did = $1`

func (s benchStore) Subject(ctx context.Context, did identity.DID) (identity.Subject, error) {
	var h string
	err := s.pool.QueryRow(ctx, benchLookup, string(did)).Scan(&h)
	if errors.Is(err, pgx.ErrNoRows) {
		return identity.Subject{}, identity.ErrUnknownDID
	}
	if err != nil {
		return identity.Subject{}, err
	}
	return identity.Subject{DID: did, Kind: identity.KindUser, Handle: identity.Handle(h)}, nil
}

func (benchStore) SetHandle(context.Context, identity.Subject, identity.Handle) error {
	return errors.New("not in this benchmark")
}

func (benchStore) ClearOrigin(context.Context, identity.Subject, origin.Write) error {
	return errors.New("not in this benchmark")
}

func randomPLC() string {
	const alpha = "abcdefghijklmnopqrstuvwxyz234567"
	var b [24]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = alpha[b[i]%32]
	}
	return "did:plc:" + string(b[:])
}

// BenchmarkIdentityEventUnknownDID feeds identity events for DIDs the
// application does not know, as the firehose does for the whole network:
// each must cost one indexed read against real Postgres and no resolution.
// The same-run baseline is the bare query through the same pool, with the
// same concurrency, so x_raw_query near 1 means the library adds nothing
// that matters.
func BenchmarkIdentityEventUnknownDID(b *testing.B) {
	ctx := context.Background()
	pool := pgtest.Pool(b)
	if _, err := pool.Exec(ctx, `CREATE TABLE bench_users (did text PRIMARY KEY, handle text NOT NULL);
		INSERT INTO bench_users SELECT 'did:plc:' || lpad(i::text, 24, 'z'), 'u' || i || '.bridge.test'
		FROM generate_series(1, 10000) AS i; ANALYZE bench_users`); err != nil {
		b.Fatal(err)
	}
	res := identitytest.NewResolver()
	r, err := identity.NewRefresher(res, benchStore{pool}, &identity.RefresherConfig{Lock: identity.NewMemoryLock(0)})
	if err != nil {
		b.Fatal(err)
	}
	const n = 4096
	events := make([]identity.IdentityEvent, n)
	for i := range events {
		events[i] = identity.IdentityEvent{DID: randomPLC(), Seq: int64(i)}
	}
	workers := 4 * runtime.GOMAXPROCS(0)

	// run spreads b.N calls of fn over the workers and returns the wall time.
	run := func(fn func(i int) error) time.Duration {
		var next atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for range workers {
			wg.Go(func() {
				for {
					i := int(next.Add(1)) - 1
					if i >= b.N {
						return
					}
					if err := fn(i); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		return time.Since(start)
	}
	baseline := run(func(i int) error {
		var h string
		err := pool.QueryRow(ctx, benchLookup, events[i%n].DID).Scan(&h)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	b.ResetTimer()
	elapsed := run(func(i int) error { return r.HandleIdentityEvent(ctx, events[i%n]) })
	b.StopTimer()
	if res.TotalCalls() != 0 {
		b.Fatalf("unknown DIDs reached the resolver %d times", res.TotalCalls())
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(baseline)/float64(elapsed), "x_raw_query")
	b.ReportMetric(float64(workers), "workers")
}
