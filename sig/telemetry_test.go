package sig_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"net/http"
	"testing"

	"github.com/fedkit/fedkit/internal/oteltest"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fedkit/fedkit/sig"
)

func TestVerifyTelemetry(t *testing.T) {
	t.Parallel()
	o := oteltest.New(t)
	rec, tp, reader, mp := o.Spans, o.TP, o.Reader, o.MP
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	b := setup(t, ed, &sig.VerifierConfig{TracerProvider: tp, MeterProvider: mp})

	const body = `{"type":"Create"}`
	signed := func(s sig.Scheme) *http.Request {
		out := newReq(t, http.MethodPost, "https://b.example/inbox", body)
		if err := b.signer.Sign(out, s); err != nil {
			t.Fatal(err)
		}
		return inbound(t, out)
	}
	tampered := signed(sig.SchemeCavage)
	tampered.Header.Set("Date", "Wed, 05 Aug 2026 12:34:57 GMT")
	cases := []struct {
		name string
		req  *http.Request
		want map[string]string // "-": absent
	}{
		{"rfc9421 verified", signed(sig.SchemeRFC9421), map[string]string{"fedkit.sig.outcome": "verified", "fedkit.sig.scheme": "rfc9421",
			"http_signatures.verified": "true", "http_signatures.key_id": keyID, "activitypub.actor.id": actor, "error.type": "-"}},
		{"cavage verified", signed(sig.SchemeCavage), map[string]string{"fedkit.sig.outcome": "verified", "fedkit.sig.scheme": "cavage",
			"http_signatures.verified": "true", "error.type": "-"}},
		{"unsigned", inbound(t, newReq(t, http.MethodPost, "https://b.example/inbox", body)), map[string]string{"fedkit.sig.outcome": "refused",
			"fedkit.sig.scheme": "none", "http_signatures.verified": "false", "error.type": "no_signature", "http_signatures.key_id": "-"}},
		{"tampered", tampered, map[string]string{"fedkit.sig.outcome": "refused", "fedkit.sig.scheme": "cavage", "error.type": "bad_signature"}},
	}
	for _, tc := range cases {
		_, _ = b.verifier.Verify(tc.req)
		// With a recording span the body is still put back for the caller.
		if got, _ := io.ReadAll(tc.req.Body); string(got) != body {
			t.Errorf("%s: body after Verify = %q", tc.name, got)
		}
	}
	spans := rec.Ended()
	if len(spans) != len(cases) {
		t.Fatalf("%d spans; want %d", len(spans), len(cases))
	}
	for i, tc := range cases {
		s := spans[i]
		if s.Name() != "sig.verify" {
			t.Errorf("%s: span %q; want sig.verify", tc.name, s.Name())
		}
		got := map[string]string{}
		for _, kv := range s.Attributes() {
			got[string(kv.Key)] = kv.Value.String()
		}
		for k, w := range tc.want {
			g, ok := got[k]
			if (w == "-" && ok) || (w != "-" && g != w) {
				t.Errorf("%s: %s = %q (present %v); want %q", tc.name, k, g, ok, w)
			}
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "fedkit.sig.verifications" {
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					counts[dp.Attributes.Encoded(attribute.DefaultEncoder())] = dp.Value
				}
			}
		}
	}
	want := map[string]int64{
		"fedkit.sig.outcome=verified,fedkit.sig.scheme=rfc9421":                        1,
		"fedkit.sig.outcome=verified,fedkit.sig.scheme=cavage":                         1,
		"error.type=no_signature,fedkit.sig.outcome=refused,fedkit.sig.scheme=none":    1,
		"error.type=bad_signature,fedkit.sig.outcome=refused,fedkit.sig.scheme=cavage": 1,
	}
	if len(counts) != len(want) {
		t.Errorf("verifications = %v; want %v", counts, want)
	}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("verifications{%s} = %d; want %d", k, counts[k], v)
		}
	}
}
