package fetch

import (
	"context"
	"strings"
)

// AliveRecorder is told of each host that answered a fetch with a
// document. A driver.AvailabilityStore is one (deliver.Config's
// Availability.Store), and so is a Deliverer, so that a host marked unavailable
// for deliveries gets them again once a fetch finds it alive.
type AliveRecorder interface {
	// SeenAlive records that host (host[:port], lower case) is alive.
	SeenAlive(ctx context.Context, host string) error
}

// seenAlive tells Config.Alive that host answered. Its failure is logged:
// it must not fail the fetch.
func (f *Fetcher) seenAlive(ctx context.Context, host string) {
	if f.cfg.Alive == nil {
		return
	}
	if err := f.cfg.Alive.SeenAlive(ctx, strings.ToLower(host)); err != nil {
		f.log.Debug("fetch: Alive failed", "host", host, "err", err)
	}
}
