package inbox

import (
	"errors"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/fedkit/fedkit/internal/otelx"
)

// Span name, attribute keys and metric name this package emits (package
// doc, "Telemetry").
const (
	spanAccept = "inbox.accept"

	// attrOutcome is accepted or refused.
	attrOutcome = attribute.Key("fedkit.inbox.outcome")
	// attrTrust is how an accepted activity was tied to its actor
	// (Trust.String: signature, ld_signature, proof, refetch, gone).
	attrTrust = attribute.Key("fedkit.inbox.trust")

	metricActivities = "fedkit.inbox.activities"
)

// reasonCode is the closed error.type of a refusal.
var reasonCode = [...]string{
	ReasonBodyTooLarge:       "body_too_large",
	ReasonNotActivity:        "not_activity",
	ReasonMalformedSignature: "malformed_signature",
	ReasonNoSignature:        "no_signature",
	ReasonBadSignature:       "bad_signature",
	ReasonKeyGone:            "key_gone",
	ReasonSignerNotActor:     "signer_not_actor",
}

func errorType(err error) string {
	var re *RefusalError
	if errors.As(err, &re) && int(re.Reason) < len(reasonCode) && reasonCode[re.Reason] != "" {
		return reasonCode[re.Reason]
	}
	return "_OTHER"
}

type telemetry struct {
	tracer    trace.Tracer
	count     metric.Int64Counter
	startOpts []trace.SpanStartOption
}

// instrument takes its providers from Config.Verifier, which the
// handler's signature check reports to as well.
func (h *Handler) instrument() {
	t := &telemetry{}
	var meter metric.Meter
	t.tracer, meter = otelx.Instruments("sig/inbox", otelx.Providers{Tracer: h.cfg.Verifier.TracerProvider, Meter: h.cfg.Verifier.MeterProvider})
	var err error
	t.count, err = meter.Int64Counter(metricActivities,
		metric.WithDescription("Activities posted to the inbox, by outcome, trust path (accepted) and error.type (refused)"),
		metric.WithUnit("{activity}"))
	if err != nil {
		t.count, _ = noop.NewMeterProvider().Meter("").Int64Counter(metricActivities)
	}
	t.startOpts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	h.tel = t
}

// Accept runs the inbox's checks on r without answering it: the body
// within bounds, a JSON activity with one actor, a valid HTTP signature,
// and the activity tied to its actor, in this order of trust:
//
//  1. the signature's key belongs to the actor (TrustSignature);
//  2. else an LD signature by the actor's key (TrustLDSignature), when
//     Config.LD is set;
//  3. else an eddsa-jcs-2022 proof by the actor's key (TrustProof),
//     checked with any LD signature detached, since Fedify makes the
//     proof first;
//  4. else the activity as its id serves it, on the actor's origin, when
//     Config.Objects is set (TrustRefetch);
//
// and a Delete of its own actor whose key is gone is TrustGone. Anything
// else is a *RefusalError. Each call is an inbox.accept span and a count
// in fedkit.inbox.activities (package doc, "Telemetry").
func (h *Handler) Accept(r *http.Request) (*Activity, error) {
	ctx, span := h.tel.tracer.Start(r.Context(), spanAccept, h.tel.startOpts...)
	defer span.End()
	if span.IsRecording() {
		// The signature check and any fetch it makes nest under this span.
		r = r.WithContext(ctx)
	}
	a, err := h.accept(r)
	if err != nil {
		h.tel.count.Add(ctx, 1, metric.WithAttributes(attrOutcome.String("refused"), otelx.ErrorType.String(errorType(err))))
	} else {
		h.tel.count.Add(ctx, 1, metric.WithAttributes(attrOutcome.String("accepted"), attrTrust.String(a.Trust.String())))
	}
	if !span.IsRecording() {
		return a, err
	}
	if err != nil {
		span.SetAttributes(attrOutcome.String("refused"), otelx.ErrorType.String(errorType(err)))
		var re *RefusalError
		if errors.As(err, &re) {
			span.SetStatus(codes.Error, re.Reason.String())
		} else {
			span.SetStatus(codes.Error, "refused")
		}
		return a, err
	}
	typ := a.Type
	if typ != "" && !strings.Contains(typ, ":") {
		typ = "https://www.w3.org/ns/activitystreams#" + typ // as Fedify writes it
	}
	span.SetAttributes(attrOutcome.String("accepted"), attrTrust.String(a.Trust.String()),
		otelx.ActivityPubActivityID.String(a.ID), otelx.ActivityPubActivityType.String(typ),
		otelx.ActivityPubActorID.String(a.Actor))
	if a.VouchedBy.String() != "" {
		span.SetAttributes(otelx.HTTPSignaturesKeyID.String(a.VouchedBy.String()))
	}
	return a, nil
}
