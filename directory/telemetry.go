package directory

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/fedkit/fedkit/internal/otelx"
)

// Span names and attribute keys this package emits (package doc, "Telemetry").
const (
	spanRegister   = "directory.register"
	spanHeartbeat  = "directory.heartbeat"
	spanUnregister = "directory.unregister"
	spanSync       = "directory.sync"
	spanReconcile  = "directory.reconcile"

	// attrOperation is the lifecycle operation of a call span: register,
	// heartbeat, unregister, sync or, on the status GET, status.
	attrOperation = attribute.Key("fedkit.directory.operation")
	// attrProtocolVersion is the lifecycle protocol version spoken (1-3).
	attrProtocolVersion = attribute.Key("fedkit.directory.protocol_version")
	// attrOutcome is a successful call's Outcome (created, recorded, ...).
	attrOutcome = attribute.Key("fedkit.directory.outcome")
	// attrReconciled is true when a heartbeat met 409 relay_not_registered
	// and registered once.
	attrReconciled = attribute.Key("fedkit.directory.reconciled")
	// attrRequests counts the signed requests one call sent.
	attrRequests = attribute.Key("fedkit.directory.requests")
	// attrReason is an invalid response's Reason.
	attrReason = attribute.Key("fedkit.directory.reason")
	// attrOrigin is the configured Directory origin on the state metric:
	// bounded by MaxDirectories.
	attrOrigin = attribute.Key("fedkit.directory.origin")
	// attrState is a local State.
	attrState = attribute.Key("fedkit.directory.state")
	// attrDiagnostic is a failed reconciliation's Diagnostic.
	attrDiagnostic = attribute.Key("fedkit.directory.diagnostic")
)

// Metric names: the Directory state gauge, and the request duration
// histogram under the HTTP semantic conventions' name.
const (
	metricState           = "fedkit.directory.state"
	metricRequestDuration = "http.client.request.duration"
)

// statusOperation is attrOperation's value on the status document's GET.
const statusOperation = "status"

// ErrorType is the closed error.type value of an error this package
// returned: a Directory error code (rate_limited, ...), invalid_response,
// lifecycle_off, timeout, canceled, blocked, transport, disabled,
// unknown_directory, unsupported_version, signing, or _OTHER.
func errorType(err error) string {
	var (
		re *ResponseError
		ie *InvalidResponseError
		te *TransportError
	)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrLifecycleOff):
		return "lifecycle_off"
	case errors.As(err, &re):
		return string(re.Code)
	case errors.As(err, &ie):
		return "invalid_response"
	case errors.As(err, &te):
		switch {
		case te.Canceled:
			return "canceled"
		case te.Timeout:
			return "timeout"
		case te.Blocked:
			return "blocked"
		}
		return "transport"
	case errors.Is(err, ErrDisabled):
		return "disabled"
	case errors.Is(err, ErrUnknownDirectory):
		return "unknown_directory"
	case errors.Is(err, ErrUnsupportedVersion):
		return "unsupported_version"
	case errors.Is(err, ErrSigning):
		return "signing"
	case errors.Is(err, ErrInvalidOrigin):
		return "invalid_origin"
	}
	return "_OTHER" // the semantic conventions' fallback value
}

// serverAttrs are server.address and server.port of a canonical origin.
func serverAttrs(origin string) []attribute.KeyValue {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return nil
	}
	port := 443
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err == nil {
			port = n
		}
	}
	return []attribute.KeyValue{otelx.ServerAddress.String(u.Hostname()), otelx.ServerPort.Int(port)}
}

// startCall opens the span of one public lifecycle call.
func (c *Client) startCall(ctx context.Context, name, op, origin string) (context.Context, trace.Span) {
	attrs := append(serverAttrs(origin), attrOperation.String(op))
	return c.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// endCall records what the call did and closes its span.
func endCall(span trace.Span, res *Result, err error) {
	if res != nil {
		span.SetAttributes(attrProtocolVersion.Int(int(res.Version)), attrRequests.Int(res.Requests))
		if res.StatusCode != 0 {
			span.SetAttributes(otelx.HTTPResponseStatusCode.Int(res.StatusCode))
		}
		if res.Outcome != "" {
			span.SetAttributes(attrOutcome.String(string(res.Outcome)))
		}
		if res.Reconciled {
			span.SetAttributes(attrReconciled.Bool(true))
		}
	}
	failSpan(span, err)
	span.End()
}

// failSpan marks span failed with err's closed error.type. The message is
// this package's own: no remote text reaches it.
func failSpan(span trace.Span, err error) {
	if err == nil {
		return
	}
	span.SetAttributes(otelx.ErrorType.String(errorType(err)))
	var ie *InvalidResponseError
	if errors.As(err, &ie) {
		span.SetAttributes(attrReason.String(string(ie.Reason)))
	}
	span.SetStatus(codes.Error, err.Error())
}

// request is one HTTP exchange being observed: its span and, for the
// duration histogram, when it started.
type request struct {
	span   trace.Span
	start  time.Time
	method string
	op     string
	c      *Client
}

// startHTTP opens the client span of one request; attempt counts from 1.
func (c *Client) startHTTP(ctx context.Context, method string, u *url.URL, op string, attempt int) (context.Context, *request) {
	attrs := append(otelx.HTTPClient(method, u), attrOperation.String(op))
	if attempt > 1 {
		attrs = append(attrs, otelx.HTTPRequestResendCount.Int(attempt-1))
	}
	ctx, span := c.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx, &request{span: span, start: time.Now(), method: method, op: op, c: c}
}

// end records the request's duration and closes its span, with its status
// code (0: none arrived). The histogram's attributes are closed values:
// no origin, so Status of any origin cannot grow it.
func (r *request) end(sc int, err error) {
	attrs := make([]attribute.KeyValue, 0, 4)
	attrs = append(attrs, otelx.HTTPRequestMethod.String(r.method), attrOperation.String(r.op))
	if sc != 0 {
		attrs = append(attrs, otelx.HTTPResponseStatusCode.Int(sc))
		r.span.SetAttributes(otelx.HTTPResponseStatusCode.Int(sc))
	}
	if err != nil {
		attrs = append(attrs, otelx.ErrorType.String(errorType(err)))
	}
	r.c.duration.Record(context.Background(), time.Since(r.start).Seconds(), metric.WithAttributes(attrs...))
	failSpan(r.span, err)
	r.span.End()
}

// durationBuckets are the HTTP semantic conventions' advised boundaries
// for http.client.request.duration, in seconds.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// instrument sets up the Client's tracer and request-duration histogram.
// A meter that refuses the histogram costs the metric only.
func (c *Client) instrument() {
	var meter metric.Meter
	c.tracer, meter = otelx.Instruments("directory", otelx.Providers{Tracer: c.cfg.TracerProvider, Meter: c.cfg.MeterProvider})
	h, err := meter.Float64Histogram(metricRequestDuration,
		metric.WithDescription("Duration of Directory HTTP requests (status reads and signed lifecycle requests)"),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		c.cfg.Logger.Warn("directory: request duration histogram unavailable", "err", err)
		h, _ = noop.NewMeterProvider().Meter("").Float64Histogram(metricRequestDuration)
	}
	c.duration = h
}

// allStates is the closed State vocabulary, in the gauge's order.
var allStates = []State{StateConfigured, StateRegistered, StateHeartbeatCurrent, StateRetrying, StateDisabled, StateUnregisterPending}

// instrument sets up the scheduler's tracer and state gauge. A meter that
// refuses the gauge costs the metric only: the scheduler runs regardless.
func (s *Scheduler) instrument() {
	var meter metric.Meter
	s.tracer, meter = otelx.Instruments("directory", otelx.Providers{Tracer: s.cfg.TracerProvider, Meter: s.cfg.MeterProvider})
	g, err := meter.Int64ObservableGauge(metricState,
		metric.WithDescription("1 for the local state each configured Directory is in, 0 for the other states; reported while the scheduler is enabled"),
		metric.WithUnit("{state}"))
	if err != nil {
		s.log.Warn("directory scheduler: state gauge unavailable", "err", err)
		return
	}
	s.gauge, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		for origin, st := range s.states {
			for _, each := range allStates {
				v := int64(0)
				if each == st {
					v = 1
				}
				o.ObserveInt64(g, v, metric.WithAttributes(attrOrigin.String(origin), attrState.String(string(each))))
			}
		}
		return nil
	}, g)
	if err != nil {
		s.log.Warn("directory scheduler: state gauge unavailable", "err", err)
	}
}

// stopGauge unregisters the gauge when Run returns: a stopped scheduler's
// last states would otherwise be reported for ever.
func (s *Scheduler) stopGauge() {
	if s.gauge != nil {
		_ = s.gauge.Unregister()
	}
}

// observe records e's local state from rec for the gauge.
func (s *Scheduler) observe(e Entry, rec StateRecord) {
	st := LocalState(e, rec, s.cfg.Now())
	s.mu.Lock()
	s.states[e.Origin] = st
	s.mu.Unlock()
}

// forgetStates drops the gauge's origins that entries no longer lists
// (all of them for nil: the scheduler is off). Bounded by MaxDirectories.
func (s *Scheduler) forgetStates(entries []Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for origin := range s.states {
		if !slices.ContainsFunc(entries, func(e Entry) bool { return e.Origin == origin }) {
			delete(s.states, origin)
		}
	}
}

// startReconcile opens the span of one due reconciliation.
func (s *Scheduler) startReconcile(ctx context.Context, origin string, op Operation) (context.Context, trace.Span) {
	attrs := append(serverAttrs(origin), attrOperation.String(string(op)))
	return s.tracer.Start(ctx, spanReconcile, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// endReconcile records the state the reconciliation left and closes its span.
func (s *Scheduler) endReconcile(span trace.Span, e Entry, rec StateRecord) {
	st := LocalState(e, rec, s.cfg.Now())
	span.SetAttributes(attrState.String(string(st)))
	if rec.Diagnostic != DiagNone {
		span.SetAttributes(attrDiagnostic.String(string(rec.Diagnostic)))
		if rec.Code != "" {
			span.SetAttributes(otelx.ErrorType.String(string(rec.Code)))
		} else {
			span.SetAttributes(otelx.ErrorType.String(string(rec.Diagnostic)))
		}
		span.SetStatus(codes.Error, string(rec.Diagnostic))
	}
	span.End()
}
