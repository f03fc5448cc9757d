// Package delivertest helps an application test its use of package
// deliver: a Recorder keeps what a Deliverer's hooks report.
//
//	var rec delivertest.Recorder
//	cfg := deliver.DefaultConfig()
//	rec.Install(cfg)
//	d, _ := deliver.New(&deliver.MemoryQueue{}, keys, c, cfg)
//	_ = d.Send(ctx, keyID, activity, inboxes)
//	_, _ = d.RunDue(ctx)
//	delivered := rec.Results()[driver.ResultDelivered]
//
// The conformance suites of the backend interfaces are in
// deliver/driver/drivertest.
package delivertest
