package redisstate_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/redisstate"
	"github.com/fedkit/fedkit/internal/redistest"
)

// BenchmarkSave reports the cost of a fenced, retention-refreshing Save
// relative to an unfenced HSET+PEXPIRE pipeline of the same fields.
func BenchmarkSave(b *testing.B) {
	rdb, prefix := redistest.Client(b)
	s, err := redisstate.New(rdb, &redisstate.Config{KeyPrefix: prefix})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	tok, err := s.Acquire(ctx, origin, time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	rec := directory.StateRecord{State: directory.StateRegistered, Registered: true, Protocol: directory.V3, Attempts: 1}
	start := time.Now()
	for i := 0; i < b.N; i++ {
		_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, prefix+"baseline", "st", "registered", "reg", "1", "pv", 3, "n", 1)
			p.PExpire(ctx, prefix+"baseline", directory.StateRetentionDefault)
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	base := time.Since(start)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Save(ctx, origin, tok, rec); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if base > 0 {
		b.ReportMetric(float64(b.Elapsed())/float64(base), "x-vs-hset")
	}
}
