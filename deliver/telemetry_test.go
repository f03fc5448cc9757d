package deliver_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/internal/oteltest"
)

// otelEnv holds the SDK's in-memory recorders (internal/oteltest).
type otelEnv struct{ *oteltest.Env }

func newOtel(t *testing.T) *otelEnv { return &otelEnv{oteltest.New(t)} }

func (o *otelEnv) install(cfg *deliver.Config) {
	cfg.TracerProvider, cfg.MeterProvider = o.TP, o.MP
}

func (o *otelEnv) metric(t *testing.T, name string) (metricdata.Aggregation, bool) {
	t.Helper()
	rm := o.Collect(t)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m.Data, true
			}
		}
	}
	return nil, false
}

func spanAttr(s sdktrace.ReadOnlySpan, k string) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == k {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func wantSpanAttrs(t *testing.T, s sdktrace.ReadOnlySpan, want map[string]string) {
	t.Helper()
	for k, w := range want {
		v, ok := spanAttr(s, k)
		switch {
		case w == "" && ok:
			t.Errorf("span %s: %s = %s; want it absent", s.Name(), k, v.String())
		case w != "" && !ok:
			t.Errorf("span %s: no %s; want %s (has %v)", s.Name(), k, w, s.Attributes())
		case w != "" && v.String() != w:
			t.Errorf("span %s: %s = %s; want %s", s.Name(), k, v.String(), w)
		}
	}
}

// counts is a counter's points keyed by their attribute sets' encoding.
func counts(t *testing.T, agg metricdata.Aggregation) map[string]int64 {
	t.Helper()
	sum, ok := agg.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("aggregation %T; want an int64 sum", agg)
	}
	out := map[string]int64{}
	for _, dp := range sum.DataPoints {
		out[dp.Attributes.Encoded(attribute.DefaultEncoder())] = dp.Value
	}
	return out
}

func TestTelemetryAttempts(t *testing.T) {
	o := newOtel(t)
	b := setup(t, func(c *deliver.Config) {
		o.install(c)
		c.Breaker.Threshold = 1
		c.Breaker.CoolOff = time.Hour
	})
	ok := newInbox(t, b.clock, status(http.StatusAccepted))
	down := newInbox(t, b.clock, status(http.StatusServiceUnavailable))

	// The application's span around the send: deliver.enqueue is its
	// child, and every attempt links to deliver.enqueue.
	ctx, app := o.TP.Tracer("app").Start(context.Background(), "app.post")
	if err := b.d.SendBatch(ctx, testKeyID, activity("1"), []string{ok.URL("/inbox"), down.URL("/inbox")}, deliver.Batch{Tag: "t"}); err != nil {
		t.Fatal(err)
	}
	app.End()
	b.runDue(t)
	b.clock.Advance(2 * time.Minute) // past the first retry, inside the cool-off
	b.runDue(t)

	enq := o.Named("deliver.enqueue")
	if len(enq) != 1 {
		t.Fatalf("%d deliver.enqueue spans; want 1", len(enq))
	}
	if enq[0].Parent().SpanID() != app.SpanContext().SpanID() || enq[0].SpanKind() != trace.SpanKindProducer {
		t.Errorf("deliver.enqueue: parent %v kind %v; want app.post's child, producer", enq[0].Parent().SpanID(), enq[0].SpanKind())
	}
	wantSpanAttrs(t, enq[0], map[string]string{
		"activitypub.activity.id":   "https://a.example/activities/1",
		"activitypub.activity.type": "https://www.w3.org/ns/activitystreams#Create",
		"activitypub.inboxes":       "2",
	})

	attempts := o.Named("deliver.attempt")
	if len(attempts) != 3 {
		t.Fatalf("%d deliver.attempt spans; want 3 (delivered, failed, held)", len(attempts))
	}
	byOutcome := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range attempts {
		v, _ := spanAttr(s, "fedkit.deliver.outcome")
		byOutcome[v.AsString()] = s
		if s.SpanKind() != trace.SpanKindClient {
			t.Errorf("deliver.attempt kind %v; want client", s.SpanKind())
		}
		links := s.Links()
		if len(links) != 1 || links[0].SpanContext.SpanID() != enq[0].SpanContext().SpanID() ||
			links[0].SpanContext.TraceID() != enq[0].SpanContext().TraceID() {
			t.Errorf("deliver.attempt links %v; want one to deliver.enqueue %v", links, enq[0].SpanContext())
		}
	}
	wantSpanAttrs(t, byOutcome["delivered"], map[string]string{
		"http.request.method":       "POST",
		"server.address":            "127.0.0.1",
		"url.full":                  ok.URL("/inbox"),
		"http.response.status_code": "202",
		"fedkit.deliver.scheme":     "rfc9421",
		"activitypub.activity.id":   "https://a.example/activities/1",
		"activitypub.activity.type": "https://www.w3.org/ns/activitystreams#Create",
		"error.type":                "",
	})
	wantSpanAttrs(t, byOutcome["failed"], map[string]string{
		"http.response.status_code": "503",
		"error.type":                "503",
		"fedkit.deliver.scheme":     "rfc9421",
	})
	wantSpanAttrs(t, byOutcome["held"], map[string]string{
		"error.type":                   "held",
		"fedkit.deliver.scheme":        "none",
		"http.response.status_code":    "",
		"activitypub.activity.retries": "1",
	})

	agg, found := o.metric(t, "fedkit.deliver.deliveries")
	if !found {
		t.Fatal("no fedkit.deliver.deliveries")
	}
	got := counts(t, agg)
	want := map[string]int64{
		"fedkit.deliver.outcome=delivered,fedkit.deliver.scheme=rfc9421": 1,
		"fedkit.deliver.outcome=failed,fedkit.deliver.scheme=rfc9421":    1,
		"fedkit.deliver.outcome=held,fedkit.deliver.scheme=none":         1,
	}
	if len(got) != len(want) {
		t.Errorf("deliveries = %v; want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("deliveries{%s} = %d; want %d (all: %v)", k, got[k], v, got)
		}
	}
	agg, found = o.metric(t, "fedkit.deliver.attempt.duration")
	if !found {
		t.Fatal("no fedkit.deliver.attempt.duration")
	}
	var n uint64
	for _, dp := range agg.(metricdata.Histogram[float64]).DataPoints {
		n += dp.Count
	}
	if n != 2 {
		t.Errorf("attempt.duration counts %d attempts; want 2 (the held one sent nothing)", n)
	}
}

func TestTelemetryMetricHosts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		hosts bool
		want  string
	}{
		{"off by default", false, "fedkit.deliver.outcome=delivered,fedkit.deliver.scheme=rfc9421"},
		{"opted in", true, "fedkit.deliver.outcome=delivered,fedkit.deliver.scheme=rfc9421,server.address=127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOtel(t)
			b := setup(t, func(c *deliver.Config) { o.install(c); c.MetricHosts = tc.hosts })
			ib := newInbox(t, b.clock, status(http.StatusAccepted))
			b.send(t, "1", ib.URL("/inbox"))
			b.runDue(t)
			agg, _ := o.metric(t, "fedkit.deliver.deliveries")
			if got := counts(t, agg); len(got) != 1 || got[tc.want] != 1 {
				t.Errorf("deliveries = %v; want {%s: 1}", got, tc.want)
			}
		})
	}
}

// TestTelemetryNoTraceParent: a send with no span in its context queues
// no traceparent, and its attempt has no link.
func TestTelemetryNoTraceParent(t *testing.T) {
	q := &deliver.MemoryQueue{}
	b := setup(t, nil)
	d, err := deliver.New(q, b.keys, testClient(t), &deliver.Config{Now: b.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ib := newInbox(t, b.clock, status(http.StatusAccepted))
	if err := d.Send(context.Background(), testKeyID, activity("1"), []string{ib.URL("/inbox")}); err != nil {
		t.Fatal(err)
	}
	jobs, err := q.Claim(context.Background(), driver.ClaimOpts{Now: b.clock.Now(), Lease: time.Minute, Limit: 1})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("Claim: %v, %d jobs", err, len(jobs))
	}
	if tp := jobs[0].Envelope.TraceParent; tp != "" {
		t.Errorf("TraceParent = %q; want empty", tp)
	}
}

func TestTelemetryGauges(t *testing.T) {
	o := newOtel(t)
	b := setup(t, func(c *deliver.Config) {
		o.install(c)
		c.Breaker.Threshold = 1
		c.Breaker.CoolOff = time.Hour
		c.PollInterval = 10 * time.Millisecond
	})
	down := newInbox(t, b.clock, status(http.StatusServiceUnavailable))
	b.send(t, "1", down.URL("/inbox"))
	b.runDue(t) // fails: the light opens, the job waits for its retry
	b.sendBatch(t, "2", deliver.Batch{Lane: driver.LaneLow}, down.URL("/other"))
	b.sendBatch(t, "3", deliver.Batch{Lane: driver.LaneLow}, down.URL("/third"))

	if _, found := o.metric(t, "fedkit.deliver.queue.depth"); found {
		t.Error("queue depth reported before Run")
	}
	stop := startRun(t, b.d)
	deadline := time.Now().Add(5 * time.Second)
	for {
		// The low lane's two are held on each claim and stay queued.
		agg, found := o.metric(t, "fedkit.deliver.queue.depth")
		if found {
			lanes := map[string]int64{}
			for _, dp := range agg.(metricdata.Gauge[int64]).DataPoints {
				v, _ := dp.Attributes.Value("fedkit.deliver.lane")
				lanes[v.AsString()] = dp.Value
			}
			if lanes["normal"] == 1 && lanes["low"] == 2 && len(lanes) == 3 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("queue depth per lane %v; want priority 0, normal 1, low 2", lanes)
			}
		} else if time.Now().After(deadline) {
			t.Fatal("no fedkit.deliver.queue.depth while Run runs")
		}
		time.Sleep(10 * time.Millisecond)
	}
	agg, found := o.metric(t, "fedkit.deliver.breakers.open")
	if !found {
		t.Fatal("no fedkit.deliver.breakers.open")
	}
	if dps := agg.(metricdata.Gauge[int64]).DataPoints; len(dps) != 1 || dps[0].Value != 1 {
		t.Errorf("breakers.open = %v; want one point of 1", dps)
	}
	stop()
	if _, found := o.metric(t, "fedkit.deliver.queue.depth"); found {
		t.Error("queue depth still reported after Run returned")
	}
}
