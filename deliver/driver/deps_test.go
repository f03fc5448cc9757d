package driver_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// A backend implements driver and never needs the application's package,
// as riverpgxv5 needs riverdriver and not river; driver itself is the
// standard library alone, so every backend can import it.
func TestImports(t *testing.T) {
	const mod = "github.com/fedkit/fedkit"
	for pkg, allowed := range map[string][]string{
		"deliver/driver":            nil,
		"deliver/pgqueue":           {"deliver/driver"},
		"deliver/redisbreaker":      {"deliver/driver"},
		"deliver/redisavailability": {"deliver/driver"},
		"deliver/pgavailability":    {"deliver/driver"},
	} {
		t.Run(pkg, func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", mod+"/"+pkg).CombinedOutput()
			if err != nil {
				t.Fatalf("go list: %v\n%s", err, out)
			}
			for _, dep := range strings.Fields(string(out)) {
				if dep == mod+"/"+pkg || (strings.HasPrefix(dep, mod+"/") && slices.Contains(allowed, strings.TrimPrefix(dep, mod+"/"))) {
					continue
				}
				if pkg == "deliver/driver" || strings.HasPrefix(dep, mod+"/") {
					t.Errorf("%s imports %s", pkg, dep)
				}
			}
		})
	}
}
