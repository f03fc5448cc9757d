package delivertest_test

import (
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/delivertest"
	"github.com/fedkit/fedkit/deliver/driver"
)

func ExampleRecorder() {
	var rec delivertest.Recorder
	cfg := deliver.DefaultConfig()
	rec.Install(cfg)
	// d, _ := deliver.New(queue, keys, client, cfg); d.Send(...); d.RunDue(ctx)
	_ = rec.Results()[driver.ResultDelivered]
}
