//go:build !unix

package deliver_test

import "time"

// processCPU is not measured here; the CPU-normalised ratio is then skipped.
func processCPU() time.Duration { return 0 }
