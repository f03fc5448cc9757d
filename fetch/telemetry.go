package fetch

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/internal/otelx"
	"github.com/fedkit/fedkit/sig"
)

// Span names, attribute keys and metric names this package emits (package
// doc, "Telemetry").
const (
	spanFetch = "fetch.get"
	spanHTTP  = "GET"

	// attrOutcome is a fetch's outcome: fetched (200), refused (another
	// status), failed (no response to read).
	attrOutcome = attribute.Key("fedkit.fetch.outcome")
	// attrSigned is true on a signed fetch (authorized fetch).
	attrSigned = attribute.Key("fedkit.fetch.signed")
	// attrScheme is the signature scheme of a signed request.
	attrScheme = attribute.Key("fedkit.fetch.scheme")
	// attrRequests counts a fetch's requests: redirect hops and a signed
	// retry each add one.
	attrRequests = attribute.Key("fedkit.fetch.requests")

	metricFetches = "fedkit.fetch.fetches"
)

// telemetry is a Fetcher's tracer and counter; the attribute sets of the
// outcomes without a status are built once.
type telemetry struct {
	tracer    trace.Tracer
	fetches   metric.Int64Counter
	fetchOpts []trace.SpanStartOption
	httpOpts  []trace.SpanStartOption
	fetched   []metric.AddOption
}

func (f *Fetcher) instrument() {
	t := &telemetry{}
	var meter metric.Meter
	t.tracer, meter = otelx.Instruments("fetch", otelx.Providers{Tracer: f.cfg.TracerProvider, Meter: f.cfg.MeterProvider})
	var err error
	t.fetches, err = meter.Int64Counter(metricFetches,
		metric.WithDescription("Document fetches, by outcome (fetched, refused with a status, failed), status code and error.type"),
		metric.WithUnit("{fetch}"))
	if err != nil {
		f.log.Warn("fetch: fetches counter unavailable", "err", err)
		t.fetches, _ = noop.NewMeterProvider().Meter("").Int64Counter(metricFetches)
	}
	t.fetchOpts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	t.httpOpts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	t.fetched = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attrOutcome.String("fetched"),
		otelx.HTTPResponseStatusCode.Int(http.StatusOK)))}
	f.tel = t
}

// trip is one fetch being observed: its span and the span of the request
// now out (a hop or a knock).
type trip struct {
	t        *telemetry
	ctx      context.Context // the fetch span's
	span     trace.Span
	hop      trace.Span
	requests int
	signed   bool
}

// startFetch opens the span of one fetch of raw. With a non-recording
// span the trip only counts the fetch.
func (f *Fetcher) startFetch(ctx context.Context, raw string, signed bool) (context.Context, *trip) {
	ctx, span := f.tel.tracer.Start(ctx, spanFetch, f.tel.fetchOpts...)
	if !span.IsRecording() {
		return ctx, &trip{t: f.tel, span: span}
	}
	if u, err := url.Parse(raw); err == nil {
		span.SetAttributes(otelx.HTTPClient(http.MethodGet, u)...)
	}
	span.SetAttributes(attrSigned.Bool(signed))
	return ctx, &trip{t: f.tel, ctx: ctx, span: span, signed: signed}
}

// request opens the span of the request r, a first request, redirect hop
// or signed retry, closing the one before it; scheme is 0 when unsigned.
// It is called through client.DoOpts.Sign, which the client calls for the
// request and each hop, so it needs no hook of its own.
func (tr *trip) request(r *http.Request, scheme sig.Scheme) {
	if tr == nil || tr.ctx == nil {
		return
	}
	tr.endRequest(0, nil)
	_, hop := tr.t.tracer.Start(tr.ctx, spanHTTP, tr.t.httpOpts...)
	hop.SetAttributes(otelx.HTTPClient(http.MethodGet, r.URL)...)
	if tr.requests > 0 {
		hop.SetAttributes(otelx.HTTPRequestResendCount.Int(tr.requests))
	}
	if scheme != 0 {
		hop.SetAttributes(attrScheme.String(scheme.String()))
	}
	tr.requests++
	tr.hop = hop
}

// endRequest closes the request span out, with its status (0: a redirect
// the client followed, whose status it does not tell) or error.
func (tr *trip) endRequest(status int, err error) {
	if tr == nil || tr.hop == nil {
		return
	}
	if status != 0 {
		tr.hop.SetAttributes(otelx.HTTPResponseStatusCode.Int(status))
		if status >= 400 {
			tr.hop.SetAttributes(otelx.ErrorType.String(strconv.Itoa(status)))
			tr.hop.SetStatus(codes.Error, http.StatusText(status))
		}
	}
	if err != nil {
		tr.hop.SetAttributes(otelx.ErrorType.String(errorType(err)))
		tr.hop.SetStatus(codes.Error, errorType(err))
	}
	tr.hop.End()
	tr.hop = nil
}

// sign is the client's signing hook for a traced fetch: it opens each
// request's span, then signs (s nil: unsigned).
func (tr *trip) sign(s RequestSigner, scheme sig.Scheme) client.SignFunc {
	if tr == nil || tr.ctx == nil {
		if s == nil {
			return nil
		}
		return func(r *http.Request) error { return s.Sign(r, scheme) }
	}
	return func(r *http.Request) error {
		if s == nil {
			tr.request(r, 0)
			return nil
		}
		tr.request(r, scheme)
		return s.Sign(r, scheme)
	}
}

// end counts the fetch and closes its spans: status is the response's,
// 0 when err says none arrived.
func (tr *trip) end(ctx context.Context, status int, err error) {
	t := tr.t
	switch {
	case err != nil:
		t.fetches.Add(ctx, 1, metric.WithAttributes(attrOutcome.String("failed"), otelx.ErrorType.String(errorType(err))))
	case status == http.StatusOK:
		t.fetches.Add(ctx, 1, t.fetched...)
	default:
		t.fetches.Add(ctx, 1, metric.WithAttributes(attrOutcome.String("refused"), otelx.HTTPResponseStatusCode.Int(status),
			otelx.ErrorType.String(strconv.Itoa(status))))
	}
	if tr.ctx == nil {
		tr.span.End()
		return
	}
	tr.endRequest(status, err)
	tr.span.SetAttributes(attrRequests.Int(tr.requests))
	switch {
	case err != nil:
		tr.span.SetAttributes(attrOutcome.String("failed"), otelx.ErrorType.String(errorType(err)))
		tr.span.SetStatus(codes.Error, errorType(err))
	case status == http.StatusOK:
		tr.span.SetAttributes(attrOutcome.String("fetched"), otelx.HTTPResponseStatusCode.Int(status))
	default:
		tr.span.SetAttributes(attrOutcome.String("refused"), otelx.HTTPResponseStatusCode.Int(status),
			otelx.ErrorType.String(strconv.Itoa(status)))
		tr.span.SetStatus(codes.Error, http.StatusText(status))
	}
	tr.span.End()
}

// errorType is the closed error.type of a fetch that got no response to
// read: budget, invalid_url, blocked, hidden_service, too_large,
// too_many_redirects, redirect_loop, scheme_downgrade, timeout, canceled,
// transport, or _OTHER (a signer's own failure among them).
func errorType(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, ErrBudgetExhausted):
		return "budget"
	case errors.Is(err, client.ErrInvalidURL):
		return "invalid_url"
	case errors.Is(err, client.ErrBlocked):
		return "blocked"
	case errors.Is(err, client.ErrHiddenService):
		return "hidden_service"
	case errors.Is(err, client.ErrTooLarge):
		return "too_large"
	case errors.Is(err, client.ErrTooManyRedirects):
		return "too_many_redirects"
	case errors.Is(err, client.ErrRedirectLoop):
		return "redirect_loop"
	case errors.Is(err, client.ErrSchemeDowngrade):
		return "scheme_downgrade"
	case errors.Is(err, client.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &ne):
		if ne.Timeout() {
			return "timeout"
		}
		return "transport"
	}
	return "_OTHER"
}
