package drivertest

import "testing"

// run runs f as t's subtest name. Under a *testing.T it is a subtest, in
// parallel with its siblings when parallel is set; under another
// testing.TB (a benchmark's, a harness's own) f runs in line, so a failure
// ends the suite there.
func run(t testing.TB, name string, parallel bool, f func(t testing.TB)) {
	t.Helper()
	if tt, ok := t.(*testing.T); ok {
		tt.Run(name, func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			f(t)
		})
		return
	}
	t.Logf("drivertest: %s", name)
	f(t)
}
