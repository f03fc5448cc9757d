package directorytest

import "testing"

// run runs f as the subtest name of tb when tb is a *testing.T, and in
// line otherwise (a *testing.B, or a testing.TB of the caller's own), so
// the suites take any testing.TB.
func run(tb testing.TB, name string, f func(tb testing.TB)) {
	tb.Helper()
	if t, ok := tb.(*testing.T); ok {
		t.Run(name, func(t *testing.T) { f(t) })
		return
	}
	f(tb)
}
