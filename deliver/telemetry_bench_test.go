package deliver_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/internal/fanoutbench"
)

// withSDK installs, for one benchmark, the OpenTelemetry SDK as the global
// providers, a span per attempt kept by an in-memory exporter (sampled
// always, exported synchronously) and metrics read by a manual reader: the
// cost of telemetry that records everything. The fanoutbench benchmarks
// build their Deliverer with a nil Config, which reads the globals.
func withSDK(b *testing.B) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	oldT, oldM := otel.GetTracerProvider(), otel.GetMeterProvider()
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	b.Cleanup(func() {
		otel.SetTracerProvider(oldT)
		otel.SetMeterProvider(oldM)
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
}

// BenchmarkFanoutSDK is BenchmarkFanout with the SDK recording every span
// and metric (withSDK).
func BenchmarkFanoutSDK(b *testing.B) {
	withSDK(b)
	fanoutbench.BenchmarkFanout(b, func(*testing.B) driver.Queue { return &deliver.MemoryQueue{} }, nil)
}

// BenchmarkFanoutFieldSDK is BenchmarkFanoutField with the SDK recording
// every span and metric (withSDK).
func BenchmarkFanoutFieldSDK(b *testing.B) {
	withSDK(b)
	for _, sc := range fanoutbench.FieldScenarios() {
		b.Run(sc.Name, func(b *testing.B) {
			fanoutbench.BenchmarkFanoutField(b, func(*testing.B) driver.Queue { return &deliver.MemoryQueue{} }, sc, nil)
		})
	}
}
