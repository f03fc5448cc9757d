package identity_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
)

// The Refresher takes the application's providers; left nil, OTel's
// global ones are used. Here the SDK's manual reader reads the refresh
// counter.
func ExampleRefresherConfig_telemetry() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	res, store := identitytest.NewResolver(), identitytest.NewStore()
	did := identity.DID("did:plc:aaaaaaaaaaaaaaaaaaaaaaaa")
	res.Set(identity.Identity{DID: did, Handle: "alice.bridge.test", DeclaredHandle: "alice.bridge.test", PDS: "https://pds.bridge.test"})
	store.Put(identity.Subject{DID: did, Kind: identity.KindUser, Handle: "old.bridge.test"})
	r, _ := identity.NewRefresher(res, store, &identity.RefresherConfig{
		Lock: identity.NewMemoryLock(0), TrustedHosts: []string{"pds.bridge.test"}, MeterProvider: mp,
	})
	_ = r.RefreshHandle(context.Background(), did)

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				trigger, _ := dp.Attributes.Value("fedkit.identity.refresh.trigger")
				reason, _ := dp.Attributes.Value("fedkit.identity.refresh.reason")
				fmt.Println(m.Name, trigger.AsString(), reason.AsString(), dp.Value)
			}
		}
	}
	// Output: fedkit.identity.refreshes call updated 1
}
