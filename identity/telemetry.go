package identity

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/fedkit/fedkit/internal/otelx"
)

// Telemetry names (package doc, "Telemetry").
const (
	spanRefresh      = "identity.refresh"
	metricRefreshes  = "fedkit.identity.refreshes"
	attrDID          = attribute.Key("fedkit.identity.did")
	attrTrigger      = attribute.Key("fedkit.identity.refresh.trigger")
	attrReason       = attribute.Key("fedkit.identity.refresh.reason")
	attrClass        = attribute.Key("fedkit.identity.refresh.class")
	attrUpdated      = attribute.Key("fedkit.identity.refresh.updated")
	attrOriginClear  = attribute.Key("fedkit.identity.refresh.origin_cleared")
	attrIncumbentRun = attribute.Key("fedkit.identity.refresh.incumbent_refreshed")
)

// Refresh triggers: what asked for a refresh. A closed set, so the
// refresh counter's cardinality is triggers x Reason codes.
const (
	triggerCall      = "call"           // RefreshHandle
	triggerEvent     = "identity_event" // HandleIdentityEvent
	triggerSweep     = "sweep"          // Sweep, not a dry run
	triggerIncumbent = "incumbent"      // the holder of a refresh's new handle
)

// refreshTelemetry is a Refresher's tracer and refresh counter.
type refreshTelemetry struct {
	tracer    trace.Tracer
	refreshes metric.Int64Counter
	// sets holds the counter's attribute set for every trigger and reason,
	// built once: hashing and sorting a set per refresh cost more than the
	// rest of a no-op refresh's telemetry together.
	sets map[[2]string]metric.AddOption
	// starts holds each trigger's span start options, built once too.
	starts map[string][]trace.SpanStartOption
}

// allReasons is the closed Reason vocabulary a refresh can end with.
var allReasons = []string{ReasonMatched, ReasonUpdated, ReasonLockBusy, ReasonLockUnavailable, ReasonDebounced,
	ReasonResolveFailed, ReasonResolveTimeout, ReasonUnverified, ReasonSubjectMismatch, ReasonInvalidDID,
	ReasonInvalidHandle, ReasonPurgeFailed, ReasonStoreFailed, ReasonRowGone, ReasonHandleTaken,
	ReasonHostedByMismatch, ReasonHostedByPending, ReasonCancelled}

func newRefreshTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) (refreshTelemetry, error) {
	tracer, meter := otelx.Instruments("identity", otelx.Providers{Tracer: tp, Meter: mp})
	c, err := meter.Int64Counter(metricRefreshes,
		metric.WithDescription("Handle refreshes, by trigger and outcome reason"),
		metric.WithUnit("{refresh}"))
	t := refreshTelemetry{tracer: tracer, refreshes: c, sets: map[[2]string]metric.AddOption{},
		starts: map[string][]trace.SpanStartOption{}}
	for _, tr := range []string{triggerCall, triggerEvent, triggerSweep, triggerIncumbent} {
		t.starts[tr] = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrTrigger.String(tr))}
		for _, re := range allReasons {
			t.sets[[2]string{tr, re}] = metric.WithAttributeSet(attribute.NewSet(attrTrigger.String(tr), attrReason.String(re)))
		}
	}
	return t, err
}

// start opens a refresh span. The DID is set after the sampling decision,
// only on a recording span: a sampler sees the trigger, never the DID.
func (t refreshTelemetry) start(ctx context.Context, did DID, trigger string) (context.Context, trace.Span) {
	ctx, span := t.tracer.Start(ctx, spanRefresh, t.starts[trigger]...)
	if span.IsRecording() {
		span.SetAttributes(attrDID.String(string(did)))
	}
	return ctx, span
}

// end counts the refresh and closes its span. The reason is the closed
// Reason code: updated or matched on success, the RefreshError's otherwise.
func (t refreshTelemetry) end(ctx context.Context, span trace.Span, trigger string, res refreshResult, err error) {
	reason := ReasonMatched
	switch {
	case err != nil:
		reason = reasonOf(err)
	case res.updated:
		reason = ReasonUpdated
	}
	set, ok := t.sets[[2]string{trigger, reason}]
	if !ok {
		set = metric.WithAttributes(attrTrigger.String(trigger), attrReason.String(reason))
	}
	t.refreshes.Add(ctx, 1, set)
	if !span.IsRecording() {
		span.End()
		return // a no-op or unsampled span keeps nothing: skip building attributes
	}
	span.SetAttributes(attrReason.String(reason), attrUpdated.Bool(res.updated), attrOriginClear.Bool(res.originCleared))
	if err != nil {
		var re *RefreshError
		if errors.As(err, &re) {
			span.SetAttributes(attrClass.String(re.Class.String()))
		}
		span.SetAttributes(otelx.ErrorType.String(reason))
		span.SetStatus(codes.Error, reason)
	}
	span.End()
}
