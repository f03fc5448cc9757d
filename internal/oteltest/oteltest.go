// Package oteltest gives tests an OpenTelemetry SDK recording every span
// and a meter read on demand, the in-memory exporters fedkit's telemetry
// tests read. It imports the SDK, so only tests may import it (deps_test.go
// exempts it from the API-only rule and keeps library code off it).
package oteltest

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// Env is a tracer provider recording every ended span and a meter provider
// behind a manual reader.
type Env struct {
	Spans  *tracetest.SpanRecorder
	TP     *sdktrace.TracerProvider
	Reader *sdkmetric.ManualReader
	MP     *sdkmetric.MeterProvider
}

// New returns an Env shut down when the test ends.
func New(t testing.TB) *Env {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	reader := sdkmetric.NewManualReader()
	e := &Env{Spans: rec, TP: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)),
		Reader: reader, MP: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))}
	t.Cleanup(func() { _ = e.TP.Shutdown(context.Background()); _ = e.MP.Shutdown(context.Background()) })
	return e
}

// Named returns the ended spans called name, in the order they ended.
func (e *Env) Named(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range e.Spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// Collect reads every metric now.
func (e *Env) Collect(t testing.TB) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := e.Reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}
