package directory_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a goroutine outlives the tests: leases renew
// in the background, and the TLS fake Directories serve on loopback.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// go-redis keeps a pool reaper and a cleanup loop per client until
		// the client is closed; redistest closes them at cleanup, but
		// their exit is not synchronous.
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).reaper"),
		goleak.IgnoreTopFunction("github.com/redis/go-redis/v9/maintnotifications.(*CircuitBreakerManager).cleanupLoop"))
}
