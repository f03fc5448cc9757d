package identity_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
)

// BenchmarkRefreshKnownDID measures the whole locked refresh of a known DID
// on fakes (resolver, store, lock, cache), so it shows the library's own
// cost. The same-run baseline is one bare fake-resolver lookup.
func BenchmarkRefreshKnownDID(b *testing.B) {
	ctx := context.Background()
	res := identitytest.NewResolver()
	store := identitytest.NewStore()
	const n = 1024
	dids := make([]identity.DID, n)
	for i := range dids {
		dids[i] = identity.DID(fmt.Sprintf("did:plc:%s", pad24(base32(i))))
		h := identity.Handle(fmt.Sprintf("u%d.bridge.test", i))
		res.Set(identity.Identity{DID: dids[i], Handle: h, DeclaredHandle: h, PDS: "https://pds.bridge.test"})
		store.Put(identity.Subject{DID: dids[i], Kind: identity.KindUser, Handle: h, PDS: "https://pds.bridge.test"})
	}
	cache, _ := identity.NewCache(res, nil, nil)
	r, err := identity.NewRefresher(res, store, &identity.RefresherConfig{
		Cache: cache, Lock: identity.NewMemoryLock(0), TrustedHosts: []string{"pds.bridge.test"},
	})
	if err != nil {
		b.Fatal(err)
	}

	start := time.Now()
	for i := range b.N {
		_, _ = res.LookupDID(ctx, dids[i%n])
	}
	baseline := time.Since(start)

	b.ResetTimer()
	for i := range b.N {
		if err := r.RefreshHandle(ctx, dids[i%n]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "refreshes/s")
	b.ReportMetric(float64(b.Elapsed())/float64(max(baseline, 1)), "x_bare_lookup")
}

// base32 spells i in the did:plc alphabet.
func base32(i int) string {
	const alpha = "abcdefghijklmnopqrstuvwxyz234567"
	s := ""
	for {
		s = string(alpha[i%32]) + s
		i /= 32
		if i == 0 {
			return s
		}
	}
}

func pad24(s string) string {
	for len(s) < 24 {
		s = "a" + s
	}
	return s
}

// BenchmarkRefreshTelemetry: the same refresh as BenchmarkRefreshKnownDID
// with the SDK installed (every span sampled, kept by an in-memory
// exporter; the counter read by a manual reader) against the default no-op
// providers, interleaved so both see the same machine; the ratio is the
// cost of recording.
func BenchmarkRefreshTelemetry(b *testing.B) {
	ctx := context.Background()
	res := identitytest.NewResolver()
	store := identitytest.NewStore()
	const n = 1024
	dids := make([]identity.DID, n)
	for i := range dids {
		dids[i] = identity.DID(fmt.Sprintf("did:plc:%s", pad24(base32(i))))
		h := identity.Handle(fmt.Sprintf("u%d.bridge.test", i))
		res.Set(identity.Identity{DID: dids[i], Handle: h, DeclaredHandle: h, PDS: "https://pds.bridge.test"})
		store.Put(identity.Subject{DID: dids[i], Kind: identity.KindUser, Handle: h, PDS: "https://pds.bridge.test"})
	}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer tp.Shutdown(ctx)
	defer mp.Shutdown(ctx)
	mk := func(tp *sdktrace.TracerProvider, mp *sdkmetric.MeterProvider) *identity.Refresher {
		cfg := &identity.RefresherConfig{Lock: identity.NewMemoryLock(0), TrustedHosts: []string{"pds.bridge.test"}}
		if tp != nil {
			cfg.TracerProvider, cfg.MeterProvider = tp, mp
		}
		r, err := identity.NewRefresher(res, store, cfg)
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	noop, sdk := mk(nil, nil), mk(tp, mp)
	tn, ts := make([]time.Duration, b.N), make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		d := dids[i%n]
		t := time.Now()
		if err := noop.RefreshHandle(ctx, d); err != nil {
			b.Fatal(err)
		}
		tn[i] = time.Since(t)
		t = time.Now()
		if err := sdk.RefreshHandle(ctx, d); err != nil {
			b.Fatal(err)
		}
		ts[i] = time.Since(t)
		if i%n == n-1 {
			exp.Reset() // bounded memory; the export itself was paid
		}
	}
	b.StopTimer()
	slices.Sort(tn)
	slices.Sort(ts)
	mn, ms := tn[len(tn)/2], ts[len(ts)/2]
	b.ReportMetric(float64(ms)/float64(max(mn, 1)), "x_noop")
	b.ReportMetric(float64(ms.Nanoseconds()), "sdk_ns/op")
	b.ReportMetric(float64(mn.Nanoseconds()), "noop_ns/op")
}
