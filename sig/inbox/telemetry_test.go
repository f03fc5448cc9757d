package inbox_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/fedkit/fedkit/internal/oteltest"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/inbox"
)

func TestInboxTelemetry(t *testing.T) {
	t.Parallel()
	o := oteltest.New(t)
	rec, tp, reader, mp := o.Spans, o.TP, o.Reader, o.MP
	alice := newPeer(t, "https://a.example/users/alice")
	r := &recv{}
	h, err := inbox.New(newKeyring(alice), r.receive, &inbox.Config{Verifier: sig.VerifierConfig{TracerProvider: tp, MeterProvider: mp}})
	if err != nil {
		t.Fatal(err)
	}
	h.ServeHTTP(httptest.NewRecorder(), post(t, alice.signer, create(alice.actor, "https://a.example/activities/1")))
	h.ServeHTTP(httptest.NewRecorder(), post(t, nil, create(alice.actor, "https://a.example/activities/2")))

	var accepts []sdktrace.ReadOnlySpan
	verifies := map[string]bool{}
	for _, s := range rec.Ended() {
		switch s.Name() {
		case "inbox.accept":
			accepts = append(accepts, s)
		case "sig.verify":
			verifies[s.Parent().SpanID().String()] = true
		}
	}
	if len(accepts) != 2 {
		t.Fatalf("%d inbox.accept spans; want 2", len(accepts))
	}
	for i, want := range []map[string]string{
		{"fedkit.inbox.outcome": "accepted", "fedkit.inbox.trust": "signature", "activitypub.activity.id": "https://a.example/activities/1",
			"activitypub.activity.type": "https://www.w3.org/ns/activitystreams#Create", "activitypub.actor.id": alice.actor,
			"http_signatures.key_id": alice.keyID},
		{"fedkit.inbox.outcome": "refused", "error.type": "no_signature"},
	} {
		got := map[string]string{}
		for _, kv := range accepts[i].Attributes() {
			got[string(kv.Key)] = kv.Value.String()
		}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("inbox.accept #%d: %s = %q; want %q", i+1, k, got[k], w)
			}
		}
		if !verifies[accepts[i].SpanContext().SpanID().String()] {
			t.Errorf("inbox.accept #%d has no sig.verify child", i+1)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "fedkit.inbox.activities" {
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					counts[dp.Attributes.Encoded(attribute.DefaultEncoder())] = dp.Value
				}
			}
		}
	}
	if counts["fedkit.inbox.outcome=accepted,fedkit.inbox.trust=signature"] != 1 ||
		counts["error.type=no_signature,fedkit.inbox.outcome=refused"] != 1 || len(counts) != 2 {
		t.Errorf("activities = %v", counts)
	}
}
