package deliver_test

import (
	"testing"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/delivertest"
)

// BenchmarkFanout sends one activity to 10,000 inboxes on 100 loopback hosts
// that answer 202 at once, signed with RSA-2048, through a MemoryQueue.
// delivertest.BenchmarkFanout says what each metric means; sign_bound_ratio
// is deliveries/s over raw rsa.SignPKCS1v15 signs/s on as many goroutines as
// cores, measured right before and right after each fan-out.
func BenchmarkFanout(b *testing.B) {
	delivertest.BenchmarkFanout(b, func(*testing.B) deliver.Queue { return &deliver.MemoryQueue{} }, nil)
}
