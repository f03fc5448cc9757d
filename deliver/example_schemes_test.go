package deliver_test

import (
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/sig"
)

func ExampleConfig_schemes() {
	cfg := deliver.DefaultConfig()
	cfg.Schemes = sig.NewHostSchemes(50_000) // shareable across Deliverers and a fetch.Fetcher
	_ = cfg
}
