package redisbreaker_test

import (
	"testing"

	"go.uber.org/goleak"
)

// No test may leave a goroutine behind (go-redis pools, the deliverers).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
