package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// scrape GETs url with the bearer token ("" for none).
func scrape(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// sample finds the value of the first Prometheus sample of name whose
// labels include every one of labels.
func sample(body, name string, labels ...string) (string, bool) {
	for line := range strings.Lines(body) {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(line, l)
		}
		if ok {
			f := strings.Fields(line)
			return f[len(f)-1], true
		}
	}
	return "", false
}

// TestMetricsBehindAdminToken: without METRICS_LISTEN, /metrics is on the
// relay's listener, behind the admin token, in Prometheus text format,
// with the relay's delivery, queue, subscriber and breaker metrics.
func TestMetricsBehindAdminToken(t *testing.T) {
	r, _, _ := statusFixture(t)
	for name, tok := range map[string]string{"no token": "", "wrong token": "nope-nope-nope-nope"} {
		if code, _ := scrape(t, r.url+"/metrics", tok); code != http.StatusUnauthorized {
			t.Errorf("%s: %d; want 401", name, code)
		}
	}
	code, body := scrape(t, r.url+"/metrics", testToken)
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d\n%s", code, body)
	}
	for _, tc := range []struct {
		what, name string
		labels     []string
		want       *regexp.Regexp
	}{
		{"delivered attempts", "fedkit_deliver_deliveries_total", []string{`fedkit_deliver_outcome="delivered"`}, regexp.MustCompile(`^[1-9][0-9]*$`)},
		{"failed attempts", "fedkit_deliver_deliveries_total", []string{`fedkit_deliver_outcome="failed"`}, regexp.MustCompile(`^[1-9][0-9]*$`)},
		{"active subscribers", "relay_subscribers", []string{`state="active"`}, regexp.MustCompile(`^2$`)},
		{"pending subscribers", "relay_subscribers", []string{`state="pending"`}, regexp.MustCompile(`^0$`)},
		{"normal lane", "fedkit_deliver_queue_depth", []string{`fedkit_deliver_lane="normal"`}, regexp.MustCompile(`^[0-9]+$`)},
		{"open breakers", "fedkit_deliver_breakers_open", nil, regexp.MustCompile(`^2$`)}, // the down host and "elsewhere"
	} {
		v, ok := sample(body, tc.name, tc.labels...)
		if !ok || !tc.want.MatchString(v) {
			t.Errorf("%s: %s%v = %q (found %v); want %s", tc.what, tc.name, tc.labels, v, ok, tc.want)
		}
	}
	if !strings.Contains(body, `service_name="fedkit-relay"`) {
		t.Errorf("no target_info with service.name:\n%s", body)
	}
	// No inbox URL or host reaches a metric label.
	if strings.Contains(body, "127.0.0.1") || strings.Contains(body, elsewhere) {
		t.Errorf("a host leaked into the metrics:\n%s", body)
	}
}

// TestMetricsListen: with METRICS_LISTEN the metrics have a listener of
// their own, without the token, and the relay's listener has no /metrics.
func TestMetricsListen(t *testing.T) {
	e, _, errb := testEnv(t)
	addr := make(chan string, 1)
	e.metricsReady = func(a string) { addr <- a }
	cfg := serverConfig(t, "PUBLIC_URL: https://relay.example\nLISTEN: 127.0.0.1:0\nADMIN_TOKEN: "+testToken+"\nMETRICS_LISTEN: 127.0.0.1:0\n")
	p := startProcess(t, e, errb, "-c", cfg, "server")
	var maddr string
	select {
	case maddr = <-addr:
	case <-time.After(10 * time.Second):
		t.Fatal("the metrics listener never started")
	}
	code, body := scrape(t, "http://"+maddr+"/metrics", "")
	if code != http.StatusOK {
		t.Fatalf("metrics listener: %d", code)
	}
	if _, ok := sample(body, "relay_subscribers", `state="active"`); !ok {
		t.Errorf("no relay_subscribers on the metrics listener:\n%s", body)
	}
	if code, _ := scrape(t, "http://"+p.addr+"/metrics", testToken); code != http.StatusNotFound {
		t.Errorf("relay listener /metrics: %d; want 404 when METRICS_LISTEN is set", code)
	}
}

// collector is a fake OTLP/HTTP receiver on loopback, decoding what the
// exporters push.
type collector struct {
	mu      sync.Mutex
	spans   []string // span names
	metrics []string // metric names
	svc     []string // service.name of each export
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch r.URL.Path {
	case "/v1/traces":
		var req colltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.Resource.Attributes {
				if kv.Key == "service.name" {
					c.svc = append(c.svc, kv.Value.GetStringValue())
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					c.spans = append(c.spans, s.Name)
				}
			}
		}
		out, _ := proto.Marshal(&colltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	case "/v1/metrics":
		var req collmetrics.ExportMetricsServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					c.metrics = append(c.metrics, m.Name)
				}
			}
		}
		out, _ := proto.Marshal(&collmetrics.ExportMetricsServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	default:
		http.NotFound(w, r)
	}
}

// TestOTLPExport: with OTEL_EXPORTER_OTLP_ENDPOINT set, a `relay directory
// register` pushes its spans (the register call and its request) and its
// metrics to the collector by OTLP/HTTP before it exits.
func TestOTLPExport(t *testing.T) {
	coll := &collector{}
	srv := httptest.NewServer(coll)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL) // read by the exporters themselves
	t.Setenv("OTEL_SERVICE_NAME", "relay-under-test")
	d, cfgPath, _ := dirSetup(t)
	e, out, errb := testEnv(t)
	e.directoryHTTP = d.Doer()
	e.lookupEnv = os.LookupEnv
	code := run(context.Background(), []string{"-c", cfgPath, "directory", "register", d.Origin()}, e)
	if code != exitOK {
		t.Fatalf("register: exit %d\n%s%s", code, out, errb)
	}
	coll.mu.Lock()
	defer coll.mu.Unlock()
	for _, want := range []string{"directory.register", "POST"} {
		found := false
		for _, s := range coll.spans {
			found = found || s == want
		}
		if !found {
			t.Errorf("collector got spans %q; want %s", coll.spans, want)
		}
	}
	if len(coll.svc) == 0 || coll.svc[0] != "relay-under-test" {
		t.Errorf("service.name = %q; want OTEL_SERVICE_NAME's", coll.svc)
	}
	found := false
	for _, m := range coll.metrics {
		found = found || m == "relay.subscribers"
	}
	if !found {
		t.Errorf("collector got metrics %q; want relay.subscribers", coll.metrics)
	}
}

// TestMetricsDirectoryState: a server running the Directory scheduler
// reports each configured Directory's state on /metrics, from package
// directory's gauge on the relay's meter provider.
func TestMetricsDirectoryState(t *testing.T) {
	d := fakeDirectory(t)
	cfgPath := serverConfig(t, schedulerYAML(d))
	e, _, errb := testEnv(t)
	e.directoryHTTP = d.Doer()
	p := startProcess(t, e, errb, "-c", cfgPath)
	origin := `fedkit_directory_origin="` + d.Origin() + `"`
	var body string
	waitUntil(t, "the registered state on /metrics", func() bool {
		_, body = scrape(t, "http://"+p.addr+"/metrics", testToken)
		v, ok := sample(body, "fedkit_directory_state", origin, `fedkit_directory_state="registered"`)
		return ok && v == "1"
	})
	if v, ok := sample(body, "http_client_request_duration_seconds_count", `fedkit_directory_operation="register"`, `http_response_status_code="201"`); !ok || v == "0" {
		t.Errorf("register request duration count = %q (found %v); want the scheduler's register", v, ok)
	}
	for _, st := range []string{"configured", "heartbeat-current", "retrying", "disabled", "unregister-pending"} {
		if v, ok := sample(body, "fedkit_directory_state", origin, `fedkit_directory_state="`+st+`"`); !ok || v != "0" {
			t.Errorf("state %s = %q (found %v); want 0", st, v, ok)
		}
	}
}
