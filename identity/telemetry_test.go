package identity_test

import (
	"context"
	"testing"

	"github.com/fedkit/fedkit/internal/oteltest"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/fedkit/fedkit/identity"
)

// otelEnv holds the SDK's in-memory recorders (internal/oteltest).
type otelEnv struct{ *oteltest.Env }

func newOtel(t *testing.T) *otelEnv { return &otelEnv{oteltest.New(t)} }

func (o *otelEnv) with(c *identity.RefresherConfig) { c.TracerProvider, c.MeterProvider = o.TP, o.MP }

// refreshes returns the ended identity.refresh spans' attributes.
func (o *otelEnv) refreshes(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	var out []sdktrace.ReadOnlySpan
	for _, s := range o.Spans.Ended() {
		if s.Name() == "identity.refresh" {
			out = append(out, s)
		}
	}
	return out
}

func attr(s sdktrace.ReadOnlySpan, k string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == k {
			return kv.Value.String()
		}
	}
	return "<absent>"
}

// counts reads fedkit.identity.refreshes as "trigger reason" -> count.
func (o *otelEnv) counts(t *testing.T) map[string]int64 {
	t.Helper()
	rm := o.Collect(t)
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "fedkit.identity.refreshes" {
				continue
			}
			if sm.Scope.Name != "github.com/fedkit/fedkit/identity" {
				t.Errorf("scope %q", sm.Scope.Name)
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok || !sum.IsMonotonic {
				t.Fatalf("%s is %T; want a monotonic int64 sum", m.Name, m.Data)
			}
			for _, dp := range sum.DataPoints {
				if dp.Attributes.Len() != 2 {
					t.Errorf("attributes %v; want trigger and reason only (no DID)", dp.Attributes.ToSlice())
				}
				tr, _ := dp.Attributes.Value(attribute.Key("fedkit.identity.refresh.trigger"))
				re, _ := dp.Attributes.Value(attribute.Key("fedkit.identity.refresh.reason"))
				out[tr.AsString()+" "+re.AsString()] = dp.Value
			}
		}
	}
	return out
}

func wantCounts(t *testing.T, got, want map[string]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("refresh counts = %v; want %v", got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("refresh counts = %v; want %v", got, want)
			return
		}
	}
}

// TestRefreshTelemetry: each refresh is one identity.refresh span and one
// count, by what triggered it and the reason it ended with.
func TestRefreshTelemetry(t *testing.T) {
	ctx := context.Background()
	t.Run("updated by an identity event, then matched by a call", func(t *testing.T) {
		o := newOtel(t)
		b := setup(t, o.with)
		if err := b.r.HandleIdentityEvent(ctx, identity.IdentityEvent{DID: string(didA)}); err != nil {
			t.Fatal(err)
		}
		if err := b.r.RefreshHandle(ctx, didA); err != nil {
			t.Fatal(err)
		}
		spans := o.refreshes(t)
		if len(spans) != 2 {
			t.Fatalf("%d refresh spans; want 2", len(spans))
		}
		for i, want := range []map[string]string{
			{"fedkit.identity.refresh.trigger": "identity_event", "fedkit.identity.refresh.reason": "updated", "fedkit.identity.refresh.updated": "true"},
			{"fedkit.identity.refresh.trigger": "call", "fedkit.identity.refresh.reason": "matched", "fedkit.identity.refresh.updated": "false"},
		} {
			want["fedkit.identity.did"] = string(didA)
			want["error.type"] = "<absent>"
			for k, v := range want {
				if got := attr(spans[i], k); got != v {
					t.Errorf("span %d: %s = %s; want %s", i, k, got, v)
				}
			}
			if spans[i].Status().Code == codes.Error {
				t.Errorf("span %d failed: %v", i, spans[i].Status())
			}
		}
		wantCounts(t, o.counts(t), map[string]int64{"identity_event updated": 1, "call matched": 1})
	})
	t.Run("failure", func(t *testing.T) {
		o := newOtel(t)
		b := setup(t, o.with)
		b.res.SetErr(didA, identity.ErrDIDNotFound)
		if err := b.r.RefreshHandle(ctx, didA); err == nil {
			t.Fatal("refresh succeeded")
		}
		spans := o.refreshes(t)
		if len(spans) != 1 || spans[0].Status().Code != codes.Error {
			t.Fatalf("spans %v; want one failed", spans)
		}
		for k, v := range map[string]string{"error.type": "resolve-failed", "fedkit.identity.refresh.reason": "resolve-failed",
			"fedkit.identity.refresh.class": "unresolved"} {
			if got := attr(spans[0], k); got != v {
				t.Errorf("%s = %s; want %s", k, got, v)
			}
		}
		wantCounts(t, o.counts(t), map[string]int64{"call resolve-failed": 1})
	})
	t.Run("sweep", func(t *testing.T) {
		o := newOtel(t)
		b := setup(t, o.with)
		if _, err := b.r.Sweep(ctx, b.store, nil); err != nil {
			t.Fatal(err)
		}
		// A dry run resolves without refreshing: not counted.
		if _, err := b.r.Sweep(ctx, b.store, &identity.SweepOpts{DryRun: true}); err != nil {
			t.Fatal(err)
		}
		wantCounts(t, o.counts(t), map[string]int64{"sweep updated": 1})
	})
	t.Run("incumbent", func(t *testing.T) {
		o := newOtel(t)
		b := setup(t, o.with)
		b.store.Put(identity.Subject{DID: didB, Kind: identity.KindUser, Handle: "new.bridge.test"})
		b.res.Set(ident(didB, "bob2.bridge.test", bridge))
		if err := b.r.RefreshHandle(ctx, didA); err != nil {
			t.Fatal(err)
		}
		spans := o.refreshes(t)
		if len(spans) != 2 {
			t.Fatalf("%d refresh spans; want bob's inside alice's", len(spans))
		}
		bob, alice := spans[0], spans[1]
		if bob.Parent().SpanID() != alice.SpanContext().SpanID() {
			t.Error("the incumbent's refresh span is not a child of the refresh that needed it")
		}
		if attr(bob, "fedkit.identity.did") != string(didB) || attr(bob, "fedkit.identity.refresh.trigger") != "incumbent" {
			t.Errorf("incumbent span %v", bob.Attributes())
		}
		if attr(alice, "fedkit.identity.refresh.incumbent_refreshed") != "true" {
			t.Errorf("alice's span %v; want incumbent_refreshed", alice.Attributes())
		}
		wantCounts(t, o.counts(t), map[string]int64{"incumbent updated": 1, "call updated": 1})
	})
}
