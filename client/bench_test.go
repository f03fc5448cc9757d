package client

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// BenchmarkGuardedGet times loopback GETs through the guarded client and
// through a plain http.Client against the same server, alternating so both
// see the same machine load, and reports guarded/plain as overhead_ratio.
func BenchmarkGuardedGet(b *testing.B) {
	body := []byte(`{"@context":"https://www.w3.org/ns/activitystreams","type":"Note","content":"hello"}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/activity+json")
		w.Write(body)
	}))
	defer srv.Close()

	guarded, err := New(&Config{AllowPrivate: loopback})
	if err != nil {
		b.Fatal(err)
	}
	defer guarded.CloseIdleConnections()
	// The baseline is what a careful user would otherwise write: the
	// default transport (idle timeout, HTTP/2) and an overall timeout.
	plainTr := http.DefaultTransport.(*http.Transport).Clone()
	plainTr.MaxIdleConnsPerHost = MaxIdleConnsPerHostDefault
	defer plainTr.CloseIdleConnections()
	plain := &http.Client{Transport: plainTr, Timeout: TimeoutDefault}

	run := func(do func(*http.Request) (*http.Response, error)) time.Duration {
		start := time.Now()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/note", nil)
		resp, err := do(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		return time.Since(start)
	}
	// Warm both pools so neither pays for dialling inside the loop.
	run(plain.Do)
	run(guarded.Do)

	var tPlain, tGuarded []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		// Alternate the order so neither always runs right after the other.
		if i%2 == 0 {
			tPlain = append(tPlain, run(plain.Do))
			tGuarded = append(tGuarded, run(guarded.Do))
		} else {
			tGuarded = append(tGuarded, run(guarded.Do))
			tPlain = append(tPlain, run(plain.Do))
		}
	}
	// Medians: on a shared machine a few stalled requests would swamp a
	// ratio of sums.
	mg, mp := median(tGuarded), median(tPlain)
	if mp > 0 {
		b.ReportMetric(float64(mg)/float64(mp), "overhead_ratio")
		b.ReportMetric(float64(mg.Nanoseconds()), "guarded_median_ns")
		b.ReportMetric(float64(mp.Nanoseconds()), "plain_median_ns")
	}
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[len(d)/2]
}
