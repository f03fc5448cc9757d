package redisbreaker

import (
	"context"
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
)

var _ driver.BreakerCounter = (*Store)(nil)

// OpenBreakers implements driver.BreakerCounter: the lights open or
// probing (red or yellow at now), for the deliverer's breakers-open gauge.
// It reads Lights, so it SCANs the key space at each metric collection.
func (s *Store) OpenBreakers(ctx context.Context, now time.Time) (int, error) {
	lights, err := s.Lights(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, l := range lights {
		if c := l.Color(now); c == driver.LightRed || c == driver.LightYellow {
			n++
		}
	}
	return n, nil
}
