package directory_test

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"slices"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fedkit/fedkit/directory"
)

// ratio runs bare and ours alternately b.N times and reports the ratio of
// their median durations; interleaving and medians resist the spikes of a
// shared machine.
func ratio(b *testing.B, unit string, bare, ours func()) {
	tb := make([]time.Duration, b.N)
	to := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		bare()
		tb[i] = time.Since(t)
		t = time.Now()
		ours()
		to[i] = time.Since(t)
	}
	b.StopTimer()
	slices.Sort(tb)
	slices.Sort(to)
	mb, mo := tb[len(tb)/2], to[len(to)/2]
	b.ReportMetric(float64(mo)/float64(max(mb, 1)), unit)
	b.ReportMetric(float64(mo.Nanoseconds()), "ours_ns/op")
	b.ReportMetric(float64(mb.Nanoseconds()), "bare_ns/op")
}

// BenchmarkRegister: one complete signed v3 register (body, digest, RFC
// 9421 signature, response validation) against the bare RSA PKCS#1 v1.5
// signature it contains; the ratio is the cost of everything around it.
func BenchmarkRegister(b *testing.B) {
	key := testKey(b)
	c, err := directory.New(key, &directory.Config{Actor: actor, PublicBaseURL: base, Directories: enabled(dirO),
		HTTP: &capture{}, Profile: fixtureProfile, Telemetry: telemetry(12, nil)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	opts := &directory.CallOpts{Version: directory.V3}
	sum := sha256.Sum256([]byte("baseline"))
	ratio(b, "x_bare_rsa_sign",
		func() { rsa.SignPKCS1v15(nil, key, crypto.SHA256, sum[:]) },
		func() {
			if _, err := c.Register(ctx, dirO, opts); err != nil {
				b.Fatal(err)
			}
		})
}

// BenchmarkParseStatus: the strict status decoder against a plain
// encoding/json decode of the same document.
func BenchmarkParseStatus(b *testing.B) {
	doc := []byte(`{"enrollment_open":true,"lifecycle_available":true,"lifecycle_enabled":true,"lifecycle_protocol_versions":[1,2,3],"public_base_url":"https://directory.example","public_listing_available":true,"public_listing_enabled":true,"schema_version":4,"service":"activity-relay-directory","version":"1.3.0-rc4"}`)
	ratio(b, "x_plain_json",
		func() {
			var m map[string]any
			json.Unmarshal(doc, &m)
		},
		func() {
			if _, err := directory.ParseStatus(doc, "https://directory.example"); err != nil {
				b.Fatal(err)
			}
		})
}

// BenchmarkRegisterTelemetry: BenchmarkRegister's call with the SDK
// installed (every span sampled, kept by an in-memory exporter) against
// the same call with the default no-op providers; the ratio is the cost of
// recording a call span and its request span.
func BenchmarkRegisterTelemetry(b *testing.B) {
	key := testKey(b)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	mk := func(tp *sdktrace.TracerProvider) *directory.Client {
		cfg := &directory.Config{Actor: actor, PublicBaseURL: base, Directories: enabled(dirO),
			HTTP: &capture{}, Profile: fixtureProfile, Telemetry: telemetry(12, nil)}
		if tp != nil {
			cfg.TracerProvider = tp
		}
		c, err := directory.New(key, cfg)
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	noop, sdk := mk(nil), mk(tp)
	ctx := context.Background()
	opts := &directory.CallOpts{Version: directory.V3}
	n := 0
	ratio(b, "x_noop",
		func() {
			if _, err := noop.Register(ctx, dirO, opts); err != nil {
				b.Fatal(err)
			}
		},
		func() {
			if _, err := sdk.Register(ctx, dirO, opts); err != nil {
				b.Fatal(err)
			}
			if n++; n%1024 == 0 {
				exp.Reset()
			}
		})
}
