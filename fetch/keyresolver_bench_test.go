package fetch_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/sig"
)

// BenchmarkKeyResolverHit measures a cached key (target < 2 µs, no
// allocation above 1 KiB) and reports hit_ratio against a bare
// mutex-guarded map lookup, alternated in the same loop; each op is a
// batch of 100 of each, so allocs/op counts 100 hits.
func BenchmarkKeyResolverHit(b *testing.B) {
	_, pem, _ := edKey(b)
	const actor = "https://a.example/actor"
	docs := newFakeDocs()
	docs.set(actor, actorWith(actor, pem))
	r, _ := fetch.NewKeyResolver(docs, nil)
	id := mustKeyID(b, actor+"#main-key")
	ctx := context.Background()
	if _, err := r.ResolveKey(ctx, id); err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	m := map[string]*sig.Key{id.String(): {}}
	const batch = 100
	// Timed in batches, alternating with the baseline, since one hit is
	// close to the clock's own cost.
	hit := func() time.Duration {
		start := time.Now()
		for range batch {
			if _, err := r.ResolveKey(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start)
	}
	baseline := func() time.Duration {
		start := time.Now()
		for range batch {
			mu.Lock()
			_ = m[id.String()]
			mu.Unlock()
		}
		return time.Since(start)
	}
	b.ReportAllocs()
	mo, mb := alternate(b, hit, baseline)
	if mb > 0 {
		b.ReportMetric(float64(mo)/float64(mb), "hit_ratio")
		b.ReportMetric(float64(mo.Nanoseconds())/batch, "hit_median_ns")
		b.ReportMetric(float64(mb.Nanoseconds())/batch, "map_median_ns")
	}
}

// BenchmarkKeyResolverMiss resolves an RSA-2048 key over loopback through
// the Fetcher (Lookup's rules, the guarded client) every time, and reports
// miss_ratio: the median miss over the median plain GET plus
// json.Unmarshal plus sig.ParsePublicKeyPEM of the same document,
// alternated in the same loop.
func BenchmarkKeyResolverMiss(b *testing.B) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	pemBytes, _ := sig.MarshalPublicKeyPEM(&key.PublicKey)
	s := newSite(b, "mastodon.test")
	actor := s.url("/users/alice")
	doc, _ := json.Marshal(actorWith(actor, string(pemBytes)))
	s.ap("/users/alice", string(doc))
	f := newFetcher(b, nil)
	r, _ := fetch.NewKeyResolver(f, nil)
	id := mustKeyID(b, actor+"#main-key")
	ctx := context.Background()
	plain := plainClient(b, s)
	miss := func() time.Duration {
		start := time.Now()
		r.Forget(id)
		if _, err := r.ResolveKey(ctx, id); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	baseline := func() time.Duration {
		start := time.Now()
		var d struct {
			PublicKey struct {
				PublicKeyPem string `json:"publicKeyPem"`
			} `json:"publicKey"`
		}
		if err := json.Unmarshal(plainGet(b, plain, actor), &d); err != nil {
			b.Fatal(err)
		}
		if _, err := sig.ParsePublicKeyPEM([]byte(d.PublicKey.PublicKeyPem)); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	miss()
	baseline()
	b.ReportAllocs()
	mo, mb := alternate(b, miss, baseline)
	if mb > 0 {
		b.ReportMetric(float64(mo)/float64(mb), "miss_ratio")
		b.ReportMetric(float64(mo.Nanoseconds()), "miss_median_ns")
		b.ReportMetric(float64(mb.Nanoseconds()), "plain_median_ns")
	}
}
