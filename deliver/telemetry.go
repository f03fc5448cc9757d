package deliver

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/internal/otelx"
	"github.com/fedkit/fedkit/sig"
)

// Span names, attribute keys and metric names this package emits (package
// doc, "Telemetry").
const (
	spanEnqueue = "deliver.enqueue"
	spanAttempt = "deliver.attempt"

	// attrOutcome is an attempt's AttemptOutcome: delivered, failed, refused, held.
	attrOutcome = attribute.Key("fedkit.deliver.outcome")
	// attrScheme is the signature scheme of the attempt's final request:
	// cavage, rfc9421, or none when nothing was signed.
	attrScheme = attribute.Key("fedkit.deliver.scheme")
	// attrLane is the send's Lane.
	attrLane = attribute.Key("fedkit.deliver.lane")
	// attrProbe is true on the attempt a breaker let through as its probe.
	attrProbe = attribute.Key("fedkit.deliver.probe")
	// attrTag is the batch's tag (spans only: tags are the application's).
	attrTag = attribute.Key("fedkit.deliver.tag")

	metricDeliveries   = "fedkit.deliver.deliveries"
	metricDuration     = "fedkit.deliver.attempt.duration"
	metricQueueDepth   = "fedkit.deliver.queue.depth"
	metricBreakersOpen = "fedkit.deliver.breakers.open"
)

// gaugeTimeout bounds a collection's queue and breaker reads.
const gaugeTimeout = 2 * time.Second

// memDepth reads a MemoryQueue's depth as a driver.DepthCounter.
type memDepth struct{ q *MemoryQueue }

func (m memDepth) Depth(context.Context) (map[driver.Lane]int, error) { return m.q.Depth(), nil }

// OpenBreakers implements BreakerCounter: lights open or probing.
func (s *MemoryBreakerStore) OpenBreakers(ctx context.Context, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, l := range s.lights {
		if !l.openUntil.IsZero() {
			n++
		}
	}
	return n, nil
}

// Indices of the per-(outcome, scheme) attribute sets built once.
const (
	nOutcomes = 4 // delivered, failed, refused, held
	nSchemes  = 3 // none, cavage, rfc9421
)

func outcomeIndex(o AttemptOutcome) int {
	switch o {
	case AttemptDelivered:
		return 0
	case AttemptRefused:
		return 2
	case AttemptHeld:
		return 3
	}
	return 1
}

func schemeIndex(s sig.Scheme) int {
	switch s {
	case sig.SchemeCavage:
		return 1
	case sig.SchemeRFC9421:
		return 2
	}
	return 0
}

func schemeName(s sig.Scheme) string {
	if schemeIndex(s) == 0 {
		return "none"
	}
	return s.String()
}

// telemetry is a Deliverer's tracer and instruments. Every metric
// attribute set is built once at New, so that an attempt with the default
// no-op providers allocates nothing for its metrics.
type telemetry struct {
	tracer     trace.Tracer
	meter      metric.Meter
	deliveries metric.Int64Counter
	duration   metric.Float64Histogram
	hosts      bool
	startOpts  []trace.SpanStartOption
	enqueueOps []trace.SpanStartOption
	addOpts    [nOutcomes][nSchemes][]metric.AddOption
	recOpts    [nOutcomes][nSchemes][]metric.RecordOption

	mu    sync.Mutex
	runs  int
	gauge metric.Registration
}

// durationBuckets are the HTTP semantic conventions' advised boundaries
// for a request's duration, in seconds, with the longer ones an attempt
// (two knocks, a tarpit held to AttemptTimeout) can take.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60}

func (d *Deliverer) instrument() {
	t := &d.tel
	t.tracer, t.meter = otelx.Instruments("deliver", otelx.Providers{Tracer: d.cfg.TracerProvider, Meter: d.cfg.MeterProvider})
	t.hosts = d.cfg.MetricHosts
	t.startOpts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	t.enqueueOps = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindProducer)}
	var err error
	t.deliveries, err = t.meter.Int64Counter(metricDeliveries,
		metric.WithDescription("Delivery attempts, by outcome (delivered, failed, refused for good, held by an open breaker) and signature scheme"),
		metric.WithUnit("{attempt}"))
	if err != nil {
		d.log.Warn("deliver: deliveries counter unavailable", "err", err)
		t.deliveries, _ = noop.NewMeterProvider().Meter("").Int64Counter(metricDeliveries)
	}
	t.duration, err = t.meter.Float64Histogram(metricDuration,
		metric.WithDescription("Duration of delivery attempts that sent a request, signing and both knocks included"),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		d.log.Warn("deliver: attempt duration histogram unavailable", "err", err)
		t.duration, _ = noop.NewMeterProvider().Meter("").Float64Histogram(metricDuration)
	}
	outcomes := [nOutcomes]string{"delivered", "failed", "refused", "held"}
	schemes := [nSchemes]string{"none", "cavage", "rfc9421"}
	for o := range nOutcomes {
		for s := range nSchemes {
			opt := metric.WithAttributeSet(attribute.NewSet(attrOutcome.String(outcomes[o]), attrScheme.String(schemes[s])))
			t.addOpts[o][s] = []metric.AddOption{opt}
			t.recOpts[o][s] = []metric.RecordOption{opt}
		}
	}
}

// startGauges registers the queue depth and breakers-open gauges while Run
// runs (once however many Runs share the Deliverer), so a stopped
// deliverer's last depth is not reported for ever; the returned func
// unregisters them with the last Run.
func (d *Deliverer) startGauges() func() {
	t := &d.tel
	t.mu.Lock()
	defer t.mu.Unlock()
	t.runs++
	if t.runs == 1 {
		t.gauge = d.registerGauges()
	}
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.runs--
		if t.runs == 0 && t.gauge != nil {
			_ = t.gauge.Unregister()
			t.gauge = nil
		}
	}
}

func (d *Deliverer) registerGauges() metric.Registration {
	t := &d.tel
	qd, hasDepth := d.queue.(driver.DepthCounter)
	if mq, ok := d.queue.(*MemoryQueue); ok {
		qd, hasDepth = memDepth{mq}, true
	}
	var bc driver.BreakerCounter
	if b := d.cfg.Breaker; b != nil {
		bc, _ = b.Store.(driver.BreakerCounter)
	}
	if !hasDepth && bc == nil {
		return nil
	}
	var insts []metric.Observable
	var depth, open metric.Int64ObservableGauge
	var err error
	if hasDepth {
		if depth, err = t.meter.Int64ObservableGauge(metricQueueDepth,
			metric.WithDescription("Queued deliveries, claimed or not, per lane (priority, normal, low)"),
			metric.WithUnit("{delivery}")); err != nil {
			d.log.Warn("deliver: queue depth gauge unavailable", "err", err)
			hasDepth = false
		} else {
			insts = append(insts, depth)
		}
	}
	if bc != nil {
		if open, err = t.meter.Int64ObservableGauge(metricBreakersOpen,
			metric.WithDescription("Circuit breakers open or probing in the breaker store"),
			metric.WithUnit("{breaker}")); err != nil {
			d.log.Warn("deliver: breakers gauge unavailable", "err", err)
			bc = nil
		} else {
			insts = append(insts, open)
		}
	}
	if len(insts) == 0 {
		return nil
	}
	lanes := [...]driver.Lane{driver.LanePriority, driver.LaneNormal, driver.LaneLow}
	var laneOpts [len(lanes)]metric.ObserveOption
	for i, l := range lanes {
		laneOpts[i] = metric.WithAttributeSet(attribute.NewSet(attrLane.String(l.String())))
	}
	reg, err := t.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, gaugeTimeout)
		defer cancel()
		var errs []error
		if hasDepth {
			// A failed read reports nothing rather than a stale value.
			if m, err := qd.Depth(ctx); err != nil {
				errs = append(errs, err)
			} else {
				for i, l := range lanes {
					o.ObserveInt64(depth, int64(m[l]), laneOpts[i])
				}
			}
		}
		if bc != nil {
			if n, err := bc.OpenBreakers(ctx, d.cfg.Now()); err != nil {
				errs = append(errs, err)
			} else {
				o.ObserveInt64(open, int64(n))
			}
		}
		return errors.Join(errs...)
	}, insts...)
	if err != nil {
		d.log.Warn("deliver: gauges unavailable", "err", err)
		return nil
	}
	return reg
}

// traceParent carries one traceparent through the W3C propagator without
// a map.
type traceParent struct{ v string }

func (c *traceParent) Get(key string) string {
	if key == "traceparent" {
		return c.v
	}
	return ""
}

func (c *traceParent) Set(key, value string) {
	if key == "traceparent" {
		c.v = value
	}
}

func (c *traceParent) Keys() []string { return []string{"traceparent"} }

// startEnqueue opens SendBatch's producer span; the Envelope's TraceParent
// is its context (the caller's when the provider records nothing), so the
// attempts link to it wherever they run.
func (d *Deliverer) startEnqueue(ctx context.Context, e *driver.Envelope) (context.Context, trace.Span) {
	ctx, span := d.tel.tracer.Start(ctx, spanEnqueue, d.tel.enqueueOps...)
	if span.IsRecording() {
		span.SetAttributes(otelx.ActivityPubActivityID.String(e.ActivityID),
			otelx.ActivityPubActivityType.String(activityType(e.Body)),
			otelx.ActivityPubActorID.String(e.ActorID),
			otelx.ActivityPubInboxes.Int(len(e.Inboxes)),
			attrLane.String(e.Lane.String()))
		if e.Tag != "" {
			span.SetAttributes(attrTag.String(e.Tag))
		}
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		var c traceParent
		propagation.TraceContext{}.Inject(ctx, &c)
		e.TraceParent = c.v
	}
	return ctx, span
}

// endSpan records err on span and closes it.
func endSpan(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.SetAttributes(otelx.ErrorType.String(enqueueErrorType(err)))
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

func enqueueErrorType(err error) string {
	switch {
	case errors.Is(err, ErrNoInboxes):
		return "no_inboxes"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "queue"
}

// startAttempt opens the span of one attempt at j. Attributes are set only
// on a recording span: with the no-op providers an attempt pays for the
// span's context and nothing else.
func (d *Deliverer) startAttempt(ctx context.Context, j *driver.Job) (context.Context, trace.Span) {
	ctx, span := d.tel.tracer.Start(ctx, spanAttempt, d.tel.startOpts...)
	if !span.IsRecording() {
		return ctx, span
	}
	e := j.Envelope
	if u, err := url.Parse(j.Inbox); err == nil {
		span.SetAttributes(otelx.HTTPClient("POST", u)...)
	}
	span.SetAttributes(otelx.ActivityPubActivityID.String(e.ActivityID),
		otelx.ActivityPubActivityType.String(activityType(e.Body)),
		attrLane.String(e.Lane.String()))
	if e.Tag != "" {
		span.SetAttributes(attrTag.String(e.Tag))
	}
	if j.Attempts > 0 {
		span.SetAttributes(otelx.ActivityPubActivityRetries.Int(j.Attempts))
	}
	if e.TraceParent != "" {
		qc := propagation.TraceContext{}.Extract(context.Background(), &traceParent{v: e.TraceParent})
		if sc := trace.SpanContextFromContext(qc); sc.IsValid() {
			span.AddLink(trace.Link{SpanContext: sc})
		}
	}
	return ctx, span
}

// recordAttempt counts a and, on a recording span, describes it.
func (d *Deliverer) recordAttempt(ctx context.Context, a *Attempt) {
	t := &d.tel
	oi, si := outcomeIndex(a.Outcome), schemeIndex(a.Scheme)
	sent := a.Outcome != AttemptHeld && a.Scheme != 0
	if t.hosts {
		attrs := metric.WithAttributes(attrOutcome.String(a.Outcome.String()), attrScheme.String(schemeName(a.Scheme)),
			otelx.ServerAddress.String(hostName(a.Host)))
		t.deliveries.Add(ctx, 1, attrs)
		if sent {
			t.duration.Record(ctx, a.Duration.Seconds(), attrs)
		}
	} else {
		t.deliveries.Add(ctx, 1, t.addOpts[oi][si]...)
		if sent {
			t.duration.Record(ctx, a.Duration.Seconds(), t.recOpts[oi][si]...)
		}
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attrOutcome.String(a.Outcome.String()), attrScheme.String(schemeName(a.Scheme)))
	if a.StatusCode != 0 {
		span.SetAttributes(otelx.HTTPResponseStatusCode.Int(a.StatusCode))
	}
	if a.Probe {
		span.SetAttributes(attrProbe.Bool(true))
	}
	if a.Outcome != AttemptDelivered {
		var derr *DeliveryError
		errors.As(a.Err, &derr)
		span.SetAttributes(otelx.ErrorType.String(attemptErrorType(derr)))
		// The message is this package's own words and the status: no
		// remote text reaches it.
		span.SetStatus(codes.Error, a.Outcome.String())
	}
}

// hostName is host without its port, as server.address reads.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return host
}

// attemptErrorType is the closed error.type of a failed or held attempt:
// the status code when one arrived (as the HTTP conventions say), else
// held, signing, timeout, blocked, invalid_url, hidden_service, redirect,
// transport, or _OTHER.
func attemptErrorType(derr *DeliveryError) string {
	switch {
	case derr == nil:
		return "_OTHER"
	case derr.Outcome == AttemptHeld:
		return "held"
	case derr.StatusCode != 0:
		return strconv.Itoa(derr.StatusCode)
	}
	err := derr.Err
	var ne net.Error
	switch {
	case errors.Is(err, errSign):
		return "signing"
	case errors.Is(err, client.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, client.ErrBlocked):
		return "blocked"
	case errors.Is(err, client.ErrInvalidURL):
		return "invalid_url"
	case errors.Is(err, client.ErrHiddenService):
		return "hidden_service"
	case errors.Is(err, client.ErrRedirectNotFollowed):
		return "redirect"
	case errors.As(err, &ne):
		if ne.Timeout() {
			return "timeout"
		}
		return "transport"
	}
	return "_OTHER"
}

// activityType is body's "type", qualified as Fedify writes it
// (https://www.w3.org/ns/activitystreams#Create); read only for a
// recording span.
func activityType(body []byte) string {
	var head struct {
		Type json.RawMessage `json:"type"`
	}
	if json.Unmarshal(body, &head) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(head.Type, &s) != nil {
		var list []string
		if json.Unmarshal(head.Type, &list) != nil || len(list) == 0 {
			return ""
		}
		s = list[0]
	}
	if s == "" || strings.Contains(s, ":") {
		return s
	}
	return "https://www.w3.org/ns/activitystreams#" + s
}
