package sig

import (
	"context"
	"errors"
	"net/http"

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
	spanVerify = "sig.verify"

	// attrOutcome is a verification's outcome: verified or refused.
	attrOutcome = attribute.Key("fedkit.sig.outcome")
	// attrScheme is the scheme the request was signed with: cavage,
	// rfc9421, or none when it carries no signature.
	attrScheme = attribute.Key("fedkit.sig.scheme")

	metricVerifications = "fedkit.sig.verifications"
)

// verifyTelemetry is a Verifier's tracer and counter, with the attribute
// sets of successful verifications built once.
type verifyTelemetry struct {
	tracer    trace.Tracer
	count     metric.Int64Counter
	startOpts []trace.SpanStartOption
	verified  [3][]metric.AddOption // by schemeIndex
}

func schemeIndex(s Scheme) int {
	switch s {
	case SchemeCavage:
		return 1
	case SchemeRFC9421:
		return 2
	}
	return 0
}

var schemeNames = [3]string{"none", "cavage", "rfc9421"}

func (v *Verifier) instrument() {
	t := &verifyTelemetry{}
	var meter metric.Meter
	t.tracer, meter = otelx.Instruments("sig", otelx.Providers{Tracer: v.cfg.TracerProvider, Meter: v.cfg.MeterProvider})
	var err error
	t.count, err = meter.Int64Counter(metricVerifications,
		metric.WithDescription("Inbound HTTP signature verifications, by outcome, scheme and error.type"),
		metric.WithUnit("{verification}"))
	if err != nil {
		t.count, _ = noop.NewMeterProvider().Meter("").Int64Counter(metricVerifications)
	}
	t.startOpts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	for i, name := range schemeNames {
		t.verified[i] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(
			attrOutcome.String("verified"), attrScheme.String(name)))}
	}
	v.tel = t
}

// signedScheme is the scheme req claims, before it is verified.
func signedScheme(req *http.Request) Scheme {
	if len(req.Header["Signature-Input"]) > 0 {
		return SchemeRFC9421
	}
	if _, ok := cavageHeader(req.Header); ok {
		return SchemeCavage
	}
	return 0
}

// Verify verifies req, signed with either scheme (RFC 9421 when it
// carries Signature-Input, cavage otherwise). It checks, in order: the
// signature parses; it covers what Mastodon requires (the method and
// target, the host or authority, Date or created, and the digest when
// there is a body; with @path for the target, the query when there is
// one); the clock window; the key; the signature; the digest
// against the body; then the nonce. The body is read and put back.
//
// Each call is a sig.verify span and a count in fedkit.sig.verifications
// (package doc, "Telemetry").
func (v *Verifier) Verify(req *http.Request) (*Result, error) {
	ctx, span := v.tel.tracer.Start(req.Context(), spanVerify, v.tel.startOpts...)
	recording := span.IsRecording()
	r := req
	if recording {
		// The key resolution (a fetch) nests under this span.
		r = req.WithContext(ctx)
	}
	res, err := v.verify(r)
	if recording {
		// The verifier put the body back on r; the caller reads req.
		req.Body, req.GetBody = r.Body, r.GetBody
	}
	scheme := signedScheme(req)
	if err == nil {
		v.tel.count.Add(ctx, 1, v.tel.verified[schemeIndex(res.Scheme)]...)
	} else {
		v.tel.count.Add(ctx, 1, metric.WithAttributes(attrOutcome.String("refused"),
			attrScheme.String(schemeNames[schemeIndex(scheme)]), otelx.ErrorType.String(errorType(err))))
	}
	if recording {
		if err == nil {
			scheme = res.Scheme
			span.SetAttributes(otelx.HTTPSignaturesKeyID.String(res.KeyID.String()), otelx.ActivityPubActorID.String(res.Owner))
		}
		span.SetAttributes(attrOutcome.String(outcomeName(err)), attrScheme.String(schemeNames[schemeIndex(scheme)]),
			otelx.HTTPSignaturesVerified.Bool(err == nil))
		if err != nil {
			span.SetAttributes(otelx.ErrorType.String(errorType(err)))
			span.SetStatus(codes.Error, errorText(err))
		}
	}
	span.End()
	return res, err
}

func outcomeName(err error) string {
	if err == nil {
		return "verified"
	}
	return "refused"
}

// errorType returns the closed, low-cardinality name of a verification
// error, as fedkit's spans and metrics carry it in error.type:
// no_signature, expired, unknown_key, gone, digest_mismatch,
// scheme_mismatch, bad_signature, unsupported_algorithm,
// missing_component, malformed, replay, weak_key, unsupported_key, or
// _OTHER; "" for nil.
func errorType(err error) string {
	var sm *SchemeMismatchError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrNoSignature):
		return "no_signature"
	case errors.Is(err, ErrExpired):
		return "expired"
	case errors.Is(err, ErrGone):
		return "gone"
	case errors.Is(err, ErrUnknownKey):
		return "unknown_key"
	case errors.Is(err, ErrDigestMismatch):
		return "digest_mismatch"
	case errors.As(err, &sm):
		return "scheme_mismatch"
	case errors.Is(err, ErrBadSignature):
		return "bad_signature"
	case errors.Is(err, ErrUnsupportedAlgorithm):
		return "unsupported_algorithm"
	case errors.Is(err, ErrMissingComponent):
		return "missing_component"
	case errors.Is(err, ErrMalformed):
		return "malformed"
	case errors.Is(err, ErrReplay):
		return "replay"
	case errors.Is(err, ErrWeakKey):
		return "weak_key"
	case errors.Is(err, ErrUnsupportedKey):
		return "unsupported_key"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	}
	return "_OTHER"
}
