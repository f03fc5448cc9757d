package deliver

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/sig"
)

// telemetryDeliverer is a Deliverer with only what startAttempt and
// recordAttempt read.
func telemetryDeliverer(cfg Config) *Deliverer {
	d := &Deliverer{cfg: cfg}
	d.instrument()
	return d
}

var telemetryJob = &driver.Job{ID: 1, Inbox: "https://b.example/inbox", Attempts: 1, Envelope: &driver.Envelope{
	ActivityID: "https://a.example/activities/1", Body: []byte(`{"id":"https://a.example/activities/1","type":"Create"}`),
	TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}

func telemetryAttempt(d *Deliverer, ctx context.Context) {
	ctx, span := d.startAttempt(ctx, telemetryJob)
	a := Attempt{Outcome: AttemptDelivered, StatusCode: 202, Scheme: sig.SchemeCavage, Duration: time.Millisecond}
	d.recordAttempt(ctx, &a)
	span.End()
}

// TestTelemetryNoopAllocations: with the default (global, no-op)
// providers an attempt's telemetry allocates only inside OTel's global
// tracer (its non-recording span and the context carrying it: 3): no
// attribute is built, no metric option made.
func TestTelemetryNoopAllocations(t *testing.T) {
	d := telemetryDeliverer(Config{})
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() { telemetryAttempt(d, ctx) }); n > 3 {
		t.Errorf("%.0f allocations per attempt with no-op providers; want at most 3", n)
	}
}

// BenchmarkAttemptTelemetry is one attempt's telemetry (its span, the
// counter and the histogram) with the default no-op providers and with
// the SDK recording everything; an RSA-2048 signature, which every attempt
// makes, takes some 800 µs of a core.
func BenchmarkAttemptTelemetry(b *testing.B) {
	b.Run("noop", func(b *testing.B) {
		d := telemetryDeliverer(Config{})
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			telemetryAttempt(d, ctx)
		}
	})
	b.Run("sdk", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter()))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
		d := telemetryDeliverer(Config{TracerProvider: tp, MeterProvider: mp})
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			telemetryAttempt(d, ctx)
		}
	})
}
