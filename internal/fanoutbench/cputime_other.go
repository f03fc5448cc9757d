//go:build !unix

package fanoutbench

import "time"

// processCPU is not measured here; the CPU-normalised ratio is then skipped.
func processCPU() time.Duration { return 0 }
