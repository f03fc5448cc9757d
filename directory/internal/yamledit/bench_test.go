package yamledit

import (
	"os"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
)

// BenchmarkDisableBytes reports the structural edit (two parses, one line
// edit, one compare) relative to a single plain parse of the same file.
func BenchmarkDisableBytes(b *testing.B) {
	src, err := os.ReadFile("testdata/full.yml")
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for i := 0; i < b.N; i++ {
		var v any
		if err := yaml.Unmarshal(src, &v); err != nil {
			b.Fatal(err)
		}
	}
	base := time.Since(start)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := DisableBytes(src, "https://directory.example"); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if base > 0 {
		b.ReportMetric(float64(b.Elapsed())/float64(base), "x-vs-parse")
	}
}
