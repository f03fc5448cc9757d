//go:build !unix

package delivertest

import "time"

// processCPU is not measured here; the CPU-normalised ratio is then skipped.
func processCPU() time.Duration { return 0 }
