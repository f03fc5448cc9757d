package identity_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoDriverImports keeps database drivers in backend subpackages: a user
// who never imports identity/pgstore never compiles pgx.
func TestNoDriverImports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, pkg := range []string{".", "./identitytest"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, banned := range []string{"github.com/jackc/", "github.com/redis/", "github.com/fedkit/fedkit/identity/pgstore"} {
				if strings.HasPrefix(dep, banned) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
