package main

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/fedkit/fedkit/examples/relay/internal/relay"
	"github.com/fedkit/fedkit/examples/relay/internal/store"
)

// The OpenTelemetry environment variables the relay reads itself; the OTLP
// exporters read the rest (headers, timeouts, certificates) on their own.
const (
	envOTLPEndpoint        = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envOTLPTracesEndpoint  = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envOTLPMetricsEndpoint = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
	envOTLPProtocol        = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envSDKDisabled         = "OTEL_SDK_DISABLED"
)

// telemetryShutdownGrace bounds the last export at exit.
const telemetryShutdownGrace = 5 * time.Second

// telemetry is the relay's OpenTelemetry SDK: a meter provider always
// (read by the Prometheus handler, and pushed by OTLP when configured), a
// tracer provider only when OTLP is configured. The providers are handed to
// the library packages through their Configs; nothing is installed
// globally.
type telemetry struct {
	tracer  trace.TracerProvider // nil without OTLP: the library falls back to the no-op global
	meter   *sdkmetric.MeterProvider
	tp      *sdktrace.TracerProvider
	metrics http.Handler // Prometheus text format

	regs []metric.Registration
}

func newTelemetry(ctx context.Context, e *env) (*telemetry, error) {
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "fedkit-relay"), attribute.String("service.version", relay.Version)),
		resource.WithFromEnv()) // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	prom, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, err
	}
	t := &telemetry{metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
	opts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithReader(prom)}

	get := func(k string) string { v, _ := e.lookupEnv(k); return v }
	otlp := get(envSDKDisabled) != "true"
	if p := get(envOTLPProtocol); otlp && p != "" && p != "http/protobuf" {
		newLogger(e).Warn("OTLP: only http/protobuf is built in; using it", "OTEL_EXPORTER_OTLP_PROTOCOL", p)
	}
	if otlp && (get(envOTLPEndpoint) != "" || get(envOTLPMetricsEndpoint) != "") {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return nil, err
		}
		opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	t.meter = sdkmetric.NewMeterProvider(opts...)
	if otlp && (get(envOTLPEndpoint) != "" || get(envOTLPTracesEndpoint) != "") {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			_ = t.meter.Shutdown(ctx)
			return nil, err
		}
		t.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		t.tracer = t.tp
	}
	return t, nil
}

// observe registers the gauge read at collection: subscribers by state.
// Deliveries, queue depth and open breakers are package deliver's own
// metrics (fedkit.deliver.*), from the providers the deliverer is given.
// The read is bounded, and a failed read reports nothing rather than a
// stale value.
func (t *telemetry) observe(a *app) error {
	m := t.meter.Meter("github.com/fedkit/fedkit/examples/relay")
	subs, err := m.Int64ObservableGauge("relay.subscribers",
		metric.WithDescription("Subscribed servers, by state (active, pending)"), metric.WithUnit("{subscriber}"))
	if err != nil {
		return err
	}
	r, err := m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		var errs []error
		if list, err := a.store.List(ctx); err != nil {
			errs = append(errs, err)
		} else {
			n := map[string]int64{"active": 0, "pending": 0}
			for _, s := range list {
				if s.State == store.StateActive {
					n["active"]++
				} else {
					n["pending"]++
				}
			}
			for state, v := range n {
				o.ObserveInt64(subs, v, metric.WithAttributes(attribute.String("state", state)))
			}
		}
		return errors.Join(errs...)
	}, subs)
	if err != nil {
		return err
	}
	t.regs = append(t.regs, r)
	return nil
}

// shutdown flushes what OTLP has not sent yet and stops the readers.
func (t *telemetry) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), telemetryShutdownGrace)
	defer cancel()
	if t.tp != nil {
		_ = t.tp.Shutdown(ctx)
	}
	// The final collection still observes the gauges, so a short-lived
	// command's OTLP export carries them; unregister only after it.
	_ = t.meter.Shutdown(ctx)
	for _, r := range t.regs {
		_ = r.Unregister()
	}
}
