// Package suite runs the cases of the project's conformance suites
// (sig/sigtest, deliver/driver/drivertest, identity/identitytest,
// directory/directorytest) under any testing.TB.
package suite

import "testing"

// Run runs f as the subtest name of tb when tb is a *testing.T (in
// parallel with its siblings when parallel is set), and in line otherwise
// (a *testing.B, or a testing.TB of the caller's own), logging the case's
// name so that a failure says which case it was.
func Run(tb testing.TB, name string, parallel bool, f func(tb testing.TB)) {
	tb.Helper()
	if t, ok := tb.(*testing.T); ok {
		t.Run(name, func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			f(t)
		})
		return
	}
	tb.Logf("case %s", name)
	f(tb)
}
