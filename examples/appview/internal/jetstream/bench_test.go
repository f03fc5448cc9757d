package jetstream

import (
	"encoding/json"
	"testing"
	"time"
)

var benchFrame = []byte(`{"did":"did:plc:o6t5vwyr7ae73foww7bgye4r","time_us":1780000000000001,"kind":"commit","commit":{"rev":"3mmoojqsbjf2d","operation":"update","collection":"app.bsky.actor.profile","rkey":"self","record":{"$type":"app.bsky.actor.profile","displayName":"A generated profile","description":"For benchmarks only","origin":"lemmy.world","originUsername":"Alice"},"cid":"bafyreigeneratedbenchmark"}}`)

// ratio reports measured/baseline, with the baseline run for the same
// number of iterations right after the measured loop (a nested
// testing.Benchmark would deadlock on the benchmark lock).
func ratio(b *testing.B, n int, unit string, baseline func()) {
	measured := b.Elapsed()
	start := time.Now()
	for range n {
		baseline()
	}
	if base := time.Since(start); base > 0 && n > 0 {
		b.ReportMetric(float64(measured)/float64(base), unit)
	}
}

// BenchmarkParse reports Parse's cost (validation and the Raw copy) as a
// ratio to a bare json.Unmarshal of the same frame.
func BenchmarkParse(b *testing.B) {
	n := 0
	for b.Loop() {
		if _, err := Parse(benchFrame); err != nil {
			b.Fatal(err)
		}
		n++
	}
	ratio(b, n, "x-json.Unmarshal", func() {
		var f Frame
		_ = json.Unmarshal(benchFrame, &f)
	})
}

// BenchmarkTracker reports the per-event cost of cursor tracking relative
// to appending to a slice (the least any ordered record could cost).
func BenchmarkTracker(b *testing.B) {
	var tr tracker
	tr.init(0)
	n := 0
	for b.Loop() {
		n++
		tr.finish(tr.add(int64(n)))
	}
	var s []int64
	i := int64(0)
	ratio(b, n, "x-append", func() {
		i++
		s = append(s, i)
		if len(s) > 64 {
			s = s[:0]
		}
	})
}
