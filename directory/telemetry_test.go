package directory_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/internal/oteltest"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/directorytest"
)

// otelEnv holds the SDK's in-memory recorders (internal/oteltest).
type otelEnv struct{ *oteltest.Env }

func newOtel(t *testing.T) *otelEnv { return &otelEnv{oteltest.New(t)} }

func attrsOf(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// wantAttrs checks each wanted attribute; a nil value means "absent".
func wantAttrs(t *testing.T, s sdktrace.ReadOnlySpan, want map[string]any) {
	t.Helper()
	got := attrsOf(s)
	for k, w := range want {
		v, ok := got[attribute.Key(k)]
		if w == nil {
			if ok {
				t.Errorf("span %s: %s = %v; want it absent", s.Name(), k, v.String())
			}
			continue
		}
		if !ok {
			t.Errorf("span %s: no %s; want %v (has %v)", s.Name(), k, w, s.Attributes())
			continue
		}
		var eq bool
		switch w := w.(type) {
		case string:
			eq = v.Type() == attribute.STRING && v.AsString() == w
		case int:
			eq = v.Type() == attribute.INT64 && v.AsInt64() == int64(w)
		case bool:
			eq = v.Type() == attribute.BOOL && v.AsBool() == w
		}
		if !eq {
			t.Errorf("span %s: %s = %v (%s); want %v", s.Name(), k, v.String(), v.Type(), w)
		}
	}
}

func childOf(t *testing.T, child, parent sdktrace.ReadOnlySpan) {
	t.Helper()
	if child.Parent().SpanID() != parent.SpanContext().SpanID() || child.SpanContext().TraceID() != parent.SpanContext().TraceID() {
		t.Errorf("span %s is not a child of %s", child.Name(), parent.Name())
	}
}

func withOtel(o *otelEnv) func(*directory.Config) {
	return func(c *directory.Config) {
		c.TracerProvider, c.MeterProvider = o.TP, o.MP
		c.Backoff = time.Millisecond
	}
}

// TestCallSpans: Sync is a span with the status GET and a register span
// below it, whose POST carries the HTTP semantic-convention attributes.
func TestCallSpans(t *testing.T) {
	o := newOtel(t)
	b := setup(t, nil, withOtel(o))
	if _, err := b.c.Sync(context.Background(), dirO, nil); err != nil {
		t.Fatal(err)
	}
	syncs, regs, gets, posts := o.Named("directory.sync"), o.Named("directory.register"), o.Named("GET"), o.Named("POST")
	if len(syncs) != 1 || len(regs) != 1 || len(gets) != 1 || len(posts) != 1 {
		t.Fatalf("spans: %d sync, %d register, %d GET, %d POST; want one each", len(syncs), len(regs), len(gets), len(posts))
	}
	sync, reg, get, post := syncs[0], regs[0], gets[0], posts[0]
	childOf(t, get, sync)
	childOf(t, reg, sync)
	childOf(t, post, reg)
	for _, s := range []sdktrace.ReadOnlySpan{sync, reg} {
		if s.SpanKind() != trace.SpanKindInternal || s.Status().Code == codes.Error {
			t.Errorf("span %s: kind %v, status %v; want internal, not failed", s.Name(), s.SpanKind(), s.Status())
		}
	}
	for _, s := range []sdktrace.ReadOnlySpan{get, post} {
		if s.SpanKind() != trace.SpanKindClient {
			t.Errorf("span %s: kind %v; want client", s.Name(), s.SpanKind())
		}
	}
	wantAttrs(t, sync, map[string]any{"fedkit.directory.operation": "sync", "server.address": "directory.example",
		"server.port": 443, "fedkit.directory.protocol_version": 3, "fedkit.directory.outcome": "created", "error.type": nil})
	wantAttrs(t, get, map[string]any{"http.request.method": "GET", "url.full": dirO + "/v1/status",
		"server.address": "directory.example", "http.response.status_code": 200, "fedkit.directory.operation": "status"})
	wantAttrs(t, reg, map[string]any{"fedkit.directory.operation": "register", "fedkit.directory.protocol_version": 3,
		"fedkit.directory.outcome": "created", "fedkit.directory.requests": 1, "http.response.status_code": 201})
	wantAttrs(t, post, map[string]any{"http.request.method": "POST", "url.full": dirO + "/v3/relays/register",
		"server.address": "directory.example", "server.port": 443, "http.response.status_code": 201,
		"fedkit.directory.operation": "register", "fedkit.directory.protocol_version": 3,
		"http.request.resend_count": nil, "error.type": nil})
}

// TestCallSpanReconciled: a heartbeat meeting 409 relay_not_registered has
// three request spans (the failed heartbeat with its error.type, the
// register, the final heartbeat) under one heartbeat span marked reconciled.
func TestCallSpanReconciled(t *testing.T) {
	o := newOtel(t)
	b := setup(t, nil, withOtel(o))
	ctx := context.Background()
	v3 := &directory.CallOpts{Version: directory.V3}
	if _, err := b.c.Register(ctx, dirO, v3); err != nil {
		t.Fatal(err)
	}
	b.d.Forget(actor)
	if _, err := b.c.Heartbeat(ctx, dirO, v3); err != nil {
		t.Fatal(err)
	}
	hb := o.Named("directory.heartbeat")
	if len(hb) != 1 {
		t.Fatalf("%d heartbeat spans", len(hb))
	}
	wantAttrs(t, hb[0], map[string]any{"fedkit.directory.reconciled": true, "fedkit.directory.requests": 3,
		"fedkit.directory.outcome": "recorded", "http.response.status_code": 200, "error.type": nil})
	var under []string
	for _, s := range o.Named("POST") {
		if s.Parent().SpanID() == hb[0].SpanContext().SpanID() {
			a := attrsOf(s)
			under = append(under, a["fedkit.directory.operation"].AsString()+" "+a["http.response.status_code"].String()+" "+a["error.type"].String())
		}
	}
	want := []string{"heartbeat 409 relay_not_registered", "register 200 ", "heartbeat 200 "}
	if !slices.Equal(under, want) {
		t.Errorf("request spans under the heartbeat = %q; want %q", under, want)
	}
}

// TestCallSpanFailures: a retried request counts its resends, and a failed
// call's span is an error with a closed error.type.
func TestCallSpanFailures(t *testing.T) {
	ctx := context.Background()
	t.Run("retry", func(t *testing.T) {
		o := newOtel(t)
		b := setup(t, nil, withOtel(o))
		b.d.Enqueue(directorytest.Reply{StatusCode: 500, Code: directory.CodeInternalError}, directorytest.Reply{StatusCode: 500, Code: directory.CodeInternalError})
		if _, err := b.c.Register(ctx, dirO, &directory.CallOpts{Version: directory.V2}); err != nil {
			t.Fatal(err)
		}
		posts := o.Named("POST")
		if len(posts) != 3 {
			t.Fatalf("%d POST spans; want 3", len(posts))
		}
		for i, s := range posts {
			want := map[string]any{"http.request.resend_count": i}
			if i == 0 {
				want["http.request.resend_count"] = nil
			}
			if i < 2 {
				want["error.type"], want["http.response.status_code"] = "internal_error", 500
				if s.Status().Code != codes.Error {
					t.Errorf("POST %d: status %v; want error", i, s.Status())
				}
			} else {
				want["error.type"], want["http.response.status_code"] = nil, 201
			}
			wantAttrs(t, s, want)
		}
		wantAttrs(t, o.Named("directory.register")[0], map[string]any{"fedkit.directory.requests": 3, "error.type": nil})
	})
	for _, tc := range []struct {
		name    string
		dcfg    *directorytest.Config
		mut     func(*directory.Config)
		origin  string
		errType string
		posts   int
	}{
		{"disabled entry", nil, func(c *directory.Config) { c.Directories = []directory.Entry{{Origin: dirO}} }, dirO, "disabled", 0},
		{"unknown origin", nil, nil, "https://other.example", "unknown_directory", 0},
		{"enrollment closed", &directorytest.Config{}, nil, dirO, "enrollment_closed", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOtel(t)
			b := setup(t, tc.dcfg, func(c *directory.Config) {
				withOtel(o)(c)
				if tc.mut != nil {
					tc.mut(c)
				}
			})
			if _, err := b.c.Register(ctx, tc.origin, &directory.CallOpts{Version: directory.V3}); err == nil {
				t.Fatal("register succeeded")
			}
			reg := o.Named("directory.register")
			if len(reg) != 1 || reg[0].Status().Code != codes.Error {
				t.Fatalf("register spans %v", reg)
			}
			wantAttrs(t, reg[0], map[string]any{"error.type": tc.errType})
			if got := len(o.Named("POST")); got != tc.posts {
				t.Errorf("%d POST spans; want %d", got, tc.posts)
			}
		})
	}
}

// gauge reads fedkit.directory.state as "origin state" -> value.
func (o *otelEnv) gauge(t *testing.T) map[string]int64 {
	t.Helper()
	rm := o.Collect(t)
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != "github.com/fedkit/fedkit/directory" {
			continue
		}
		for _, m := range sm.Metrics {
			if m.Name != "fedkit.directory.state" {
				continue
			}
			g, ok := m.Data.(metricdata.Gauge[int64])
			if !ok {
				t.Fatalf("%s is %T; want an int64 gauge", m.Name, m.Data)
			}
			for _, dp := range g.DataPoints {
				if dp.Attributes.Len() != 2 {
					t.Errorf("data point attributes %v; want origin and state only", dp.Attributes.ToSlice())
				}
				origin, _ := dp.Attributes.Value("fedkit.directory.origin")
				state, _ := dp.Attributes.Value("fedkit.directory.state")
				out[origin.AsString()+" "+state.AsString()] = dp.Value
			}
		}
	}
	return out
}

// current is the one state whose series is 1 for origin, checking that
// every state has a series.
func current(t *testing.T, g map[string]int64, origin string) string {
	t.Helper()
	var on []string
	n := 0
	for k, v := range g {
		st, ok := strings.CutPrefix(k, origin+" ")
		if !ok {
			continue
		}
		n++
		if v == 1 {
			on = append(on, st)
		}
	}
	if n != 6 || len(on) != 1 {
		t.Fatalf("gauge for %s: %d series, %q at 1; want six, one at 1 (%v)", origin, n, on, g)
	}
	return on[0]
}

// TestSchedulerTelemetry: the state gauge follows each configured
// Directory (registered, then disabled, then nothing once the scheduler is
// off), and a due reconciliation is a span above the client's call span.
func TestSchedulerTelemetry(t *testing.T) {
	o := newOtel(t)
	e := newSchedEnv(t, nil, directory.Profile{})
	s := e.scheduler(&directory.SchedulerConfig{TracerProvider: o.TP, MeterProvider: o.MP})
	ctx := context.Background()
	if g := o.gauge(t); len(g) != 0 {
		t.Fatalf("gauge before any tick = %v; want no series", g)
	}
	s.Tick(ctx)
	if st := current(t, o.gauge(t), schedOrigin); st != string(directory.StateRegistered) {
		t.Errorf("state after the startup register = %s; want registered", st)
	}
	rs := o.Named("directory.reconcile")
	if len(rs) != 1 {
		t.Fatalf("%d reconcile spans; want 1", len(rs))
	}
	wantAttrs(t, rs[0], map[string]any{"fedkit.directory.operation": "register", "server.address": "directory.example",
		"fedkit.directory.state": "registered", "error.type": nil})

	e.writeConfig(strings.Replace(schedYAML, "enabled: true", "enabled: false", 1))
	s.Tick(ctx)
	if st := current(t, o.gauge(t), schedOrigin); st != string(directory.StateDisabled) {
		t.Errorf("state of a disabled entry = %s; want disabled", st)
	}
	e.writeConfig(strings.Replace(schedYAML, "DIRECTORY_SCHEDULER_ENABLED: true", "DIRECTORY_SCHEDULER_ENABLED: false", 1))
	s.Tick(ctx)
	if g := o.gauge(t); len(g) != 0 {
		t.Errorf("gauge with the scheduler off = %v; want no series", g)
	}
}

// TestSchedulerReconcileSpanParents: with one provider for the client and
// the scheduler, the client's call span is the reconciliation's child; a
// failed reconciliation is an error span with the Directory's code.
func TestSchedulerReconcileSpanParents(t *testing.T) {
	o := newOtel(t)
	e := newSchedEnv(t, nil, directory.Profile{})
	key := testKey(t)
	cl, err := directory.New(key, &directory.Config{Actor: schedActor, PublicBaseURL: schedBase,
		Directories: []directory.Entry{{Origin: schedOrigin, Enabled: true}}, HTTP: e.srv.Doer(), TracerProvider: o.TP})
	if err != nil {
		t.Fatal(err)
	}
	e.lc.Lifecycle = cl
	e.srv.SetEnrollment(false)
	s := e.scheduler(&directory.SchedulerConfig{TracerProvider: o.TP, MeterProvider: o.MP})
	s.Tick(context.Background())
	rs, regs := o.Named("directory.reconcile"), o.Named("directory.register")
	if len(rs) != 1 || len(regs) != 1 {
		t.Fatalf("%d reconcile, %d register spans; want one each", len(rs), len(regs))
	}
	childOf(t, regs[0], rs[0])
	if rs[0].Status().Code != codes.Error {
		t.Errorf("reconcile status %v; want error", rs[0].Status())
	}
	wantAttrs(t, rs[0], map[string]any{"error.type": "enrollment_closed", "fedkit.directory.diagnostic": "directory_error",
		"fedkit.directory.state": "retrying"})
	if st := current(t, o.gauge(t), schedOrigin); st != string(directory.StateRetrying) {
		t.Errorf("gauge state = %s; want retrying", st)
	}
}

// TestRequestDuration: every request is one http.client.request.duration
// observation with closed attributes only (no origin, URL or host).
func TestRequestDuration(t *testing.T) {
	o := newOtel(t)
	b := setup(t, nil, withOtel(o))
	b.d.Enqueue(directorytest.Reply{StatusCode: 500, Code: directory.CodeInternalError})
	if _, err := b.c.Sync(context.Background(), dirO, nil); err != nil {
		t.Fatal(err)
	}
	rm := o.Collect(t)
	got := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "http.client.request.duration" {
				continue
			}
			if m.Unit != "s" || sm.Scope.Name != "github.com/fedkit/fedkit/directory" {
				t.Errorf("unit %q, scope %q", m.Unit, sm.Scope.Name)
			}
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok {
				t.Fatalf("%T; want a float64 histogram", m.Data)
			}
			for _, dp := range h.DataPoints {
				var key []string
				for _, kv := range dp.Attributes.ToSlice() {
					switch kv.Key {
					case "http.request.method", "fedkit.directory.operation", "http.response.status_code", "error.type":
						key = append(key, kv.Value.String())
					default:
						t.Errorf("unexpected metric attribute %s=%s", kv.Key, kv.Value.String())
					}
				}
				got[strings.Join(key, " ")] += dp.Count
			}
		}
	}
	// Keys in attribute order: error.type, operation, method, status code.
	want := map[string]uint64{
		"status GET 200":                   1,
		"internal_error register POST 500": 1,
		"register POST 201":                1,
	}
	if len(got) != len(want) {
		t.Fatalf("observations %v; want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("observations %v; want %v", got, want)
		}
	}
}
