package fetch_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/fedkit/fedkit/internal/oteltest"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/sig"
)

// otelEnv holds the SDK's in-memory recorders (internal/oteltest).
type otelEnv struct{ *oteltest.Env }

func newOtel(t *testing.T) *otelEnv { return &otelEnv{oteltest.New(t)} }

// attrs renders the wanted keys of s, "-" for an absent one.
func attrs(s sdktrace.ReadOnlySpan, keys ...string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		out[k] = "-"
	}
	for _, kv := range s.Attributes() {
		if _, ok := out[string(kv.Key)]; ok {
			out[string(kv.Key)] = kv.Value.String()
		}
	}
	return out
}

func (o *otelEnv) fetches(t *testing.T) map[string]int64 {
	t.Helper()
	rm := o.Collect(t)
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "fedkit.fetch.fetches" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				out[dp.Attributes.Encoded(attribute.DefaultEncoder())] += dp.Value
			}
		}
	}
	return out
}

func TestTelemetrySignedRetry(t *testing.T) {
	t.Parallel()
	o := newOtel(t)
	sg := newSigning(t)
	s := newSite(t, "secure.test")
	af := &authorizedFetch{}
	s.mux.HandleFunc("/note", af.handler(sg, map[sig.Scheme]bool{sig.SchemeRFC9421: true}, s.expand(`{"id":"{base}/note","type":"Note"}`)))
	f := newFetcher(t, &fetch.Config{Signer: sg.signer, FirstScheme: sig.SchemeCavage, TracerProvider: o.TP, MeterProvider: o.MP})
	if _, err := f.Lookup(context.Background(), s.url("/note")); err != nil {
		t.Fatal(err)
	}
	fetches := o.Named("fetch.get")
	if len(fetches) != 1 {
		t.Fatalf("%d fetch.get spans; want 1", len(fetches))
	}
	keys := []string{"fedkit.fetch.outcome", "fedkit.fetch.requests", "fedkit.fetch.signed", "http.response.status_code", "server.address", "url.full"}
	if got, want := attrs(fetches[0], keys...), map[string]string{"fedkit.fetch.outcome": "fetched", "fedkit.fetch.requests": "2",
		"fedkit.fetch.signed": "true", "http.response.status_code": "200", "server.address": "secure.test", "url.full": s.url("/note")}; !equal(got, want) {
		t.Errorf("fetch.get attributes %v; want %v", got, want)
	}
	reqs := o.Named("GET")
	if len(reqs) != 2 {
		t.Fatalf("%d GET spans; want 2 (the refused knock and the signed retry)", len(reqs))
	}
	keys = []string{"fedkit.fetch.scheme", "http.response.status_code", "http.request.resend_count", "error.type"}
	for i, want := range []map[string]string{
		{"fedkit.fetch.scheme": "cavage", "http.response.status_code": "401", "http.request.resend_count": "-", "error.type": "401"},
		{"fedkit.fetch.scheme": "rfc9421", "http.response.status_code": "200", "http.request.resend_count": "1", "error.type": "-"},
	} {
		if got := attrs(reqs[i], keys...); !equal(got, want) {
			t.Errorf("GET #%d attributes %v; want %v", i+1, got, want)
		}
		if reqs[i].Parent().SpanID() != fetches[0].SpanContext().SpanID() {
			t.Errorf("GET #%d is not fetch.get's child", i+1)
		}
	}
	if got := o.fetches(t); len(got) != 1 || got["fedkit.fetch.outcome=fetched,http.response.status_code=200"] != 1 {
		t.Errorf("fetches = %v; want one fetched", got)
	}
}

func TestTelemetryRedirectHops(t *testing.T) {
	t.Parallel()
	o := newOtel(t)
	s := newSite(t, "hops.test")
	s.ap("/note", `{"id":"{base}/note","type":"Note"}`)
	s.mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/note", http.StatusMovedPermanently)
	})
	s.serve("/missing", 404, "", "")
	f := newFetcher(t, &fetch.Config{TracerProvider: o.TP, MeterProvider: o.MP})
	if _, err := f.Lookup(context.Background(), s.url("/old")); err != nil {
		t.Fatal(err)
	}
	reqs := o.Named("GET")
	if len(reqs) != 2 {
		t.Fatalf("%d GET spans; want 2 (the first request and its redirect hop)", len(reqs))
	}
	keys := []string{"url.full", "http.response.status_code", "http.request.resend_count", "fedkit.fetch.scheme"}
	for i, want := range []map[string]string{
		{"url.full": s.url("/old"), "http.response.status_code": "-", "http.request.resend_count": "-", "fedkit.fetch.scheme": "-"},
		{"url.full": s.url("/note"), "http.response.status_code": "200", "http.request.resend_count": "1", "fedkit.fetch.scheme": "-"},
	} {
		if got := attrs(reqs[i], keys...); !equal(got, want) {
			t.Errorf("GET #%d attributes %v; want %v", i+1, got, want)
		}
	}
	if _, err := f.Lookup(context.Background(), s.url("/missing")); err == nil {
		t.Fatal("Lookup of a 404: no error")
	}
	got := o.fetches(t)
	want := map[string]int64{
		"fedkit.fetch.outcome=fetched,http.response.status_code=200":                1,
		"error.type=404,fedkit.fetch.outcome=refused,http.response.status_code=404": 1,
	}
	if len(got) != len(want) || got[keysOf(want)[0]] != 1 || got[keysOf(want)[1]] != 1 {
		t.Errorf("fetches = %v; want %v", got, want)
	}
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func keysOf(m map[string]int64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
