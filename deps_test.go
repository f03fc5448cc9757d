package fedkit_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// libraryInternal are the internal packages library code may import: shared
// names, not test helpers. Every package may use them, the ownTree ones too.
var libraryInternal = map[string]bool{
	"github.com/fedkit/fedkit/internal/otelx": true,
	"github.com/fedkit/fedkit/internal/clock": true,
}

// Dependencies point one way (STYLE.md): the core packages stay free of
// database and YAML drivers so that a user who never imports a backend never
// compiles one.
func TestDependencyDirection(t *testing.T) {
	const mod = "github.com/fedkit/fedkit"
	drivers := []string{"github.com/jackc/pgx", "github.com/redis/go-redis", "github.com/goccy/go-yaml"}
	cases := []struct {
		pkg       string
		forbidden []string
		// ownTree: may import only its own subtree of fedkit.
		ownTree bool
		// only, when set, lists the fedkit packages it may import.
		only []string
	}{
		{pkg: "client", forbidden: drivers, ownTree: true},
		{pkg: "sig", forbidden: drivers, ownTree: true},
		{pkg: "sig/ldsig", forbidden: append(drivers, mod+"/client", mod+"/origin", mod+"/fetch", mod+"/deliver", mod+"/identity", mod+"/directory")}, // sig and the JSON-LD library only
		{pkg: "origin", forbidden: drivers, ownTree: true},
		{pkg: "fetch", forbidden: drivers},
		{pkg: "deliver", forbidden: drivers},
		{pkg: "identity", forbidden: drivers},
		{pkg: "directory", forbidden: drivers[:2]},
		// Verification lives in sig; what needs fetching sits behind
		// interfaces the inbox owns.
		{pkg: "sig/inbox", forbidden: drivers, only: []string{"sig"}},
		// Serving sends through the Sender interface it owns, never
		// through deliver itself.
		{pkg: "fetch/serve", forbidden: append(drivers, mod+"/deliver", mod+"/identity", mod+"/directory")},
		{pkg: "internal/otelx", forbidden: drivers, ownTree: true},
		{pkg: "internal/clock", forbidden: drivers, ownTree: true},
		// Scheme-memory backends: sig and one driver.
		{pkg: "sig/redisschemes", forbidden: []string{drivers[0], drivers[2]}, only: []string{"sig"}},
		{pkg: "sig/pgschemes", forbidden: drivers[1:], only: []string{"sig"}},
		// Availability backends: deliver and one driver.
		{pkg: "deliver/redisavailability", forbidden: []string{drivers[0], drivers[2]}},
		{pkg: "deliver/pgavailability", forbidden: drivers[1:]},
		// The simulated fediverse serves every queue's tests: stdlib only.
		{pkg: "internal/fedsim", forbidden: drivers, ownTree: true},
	}
	for _, tc := range cases {
		t.Run(tc.pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./"+tc.pkg).CombinedOutput()
			if err != nil {
				if strings.Contains(string(out), "matched no packages") || strings.Contains(string(out), "no Go files") || strings.Contains(string(out), "directory not found") {
					t.Skipf("package %s not built yet", tc.pkg)
				}
				t.Fatalf("go list: %v\n%s", err, out)
			}
			self := mod + "/" + tc.pkg
			for _, dep := range strings.Fields(string(out)) {
				for _, f := range tc.forbidden {
					if strings.HasPrefix(dep, f) {
						t.Errorf("%s depends on %s", tc.pkg, dep)
					}
				}
				if strings.HasPrefix(dep, mod+"/internal/") && dep != self && !libraryInternal[dep] {
					t.Errorf("%s depends on test helper %s outside tests", tc.pkg, dep)
				}
				if strings.HasPrefix(dep, mod+"/examples/") {
					t.Errorf("%s depends on example %s", tc.pkg, dep)
				}
				if tc.ownTree && strings.HasPrefix(dep, mod+"/") && dep != self && !strings.HasPrefix(dep, self+"/") && !libraryInternal[dep] {
					t.Errorf("%s must import no other fedkit package, imports %s", tc.pkg, dep)
				}
				if tc.only != nil && strings.HasPrefix(dep, mod+"/") && dep != self && !libraryInternal[dep] {
					if !slices.Contains(tc.only, strings.TrimPrefix(dep, mod+"/")) {
						t.Errorf("%s may import only %v of fedkit, imports %s", tc.pkg, tc.only, dep)
					}
				}
			}
		})
	}
}

// telemetryBackends are what only applications install: the OpenTelemetry
// SDK, its exporters and what they pull in (Prometheus, gRPC, the OTLP
// protobufs). A library package uses the OpenTelemetry API alone, so an
// application that installs no provider pays for no-ops and compiles no
// exporter.
var telemetryBackends = []string{
	"go.opentelemetry.io/otel/sdk",
	"go.opentelemetry.io/otel/exporters/",
	"go.opentelemetry.io/contrib/",
	"go.opentelemetry.io/proto/",
	"github.com/prometheus/",
	"google.golang.org/grpc",
}

// TestTelemetryAPIOnly: every package but the examples (its tests aside)
// depends on the OpenTelemetry API only.
func TestTelemetryAPIOnly(t *testing.T) {
	const mod = "github.com/fedkit/fedkit"
	out, err := exec.Command("go", "list", "-deps=false", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	checked := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		// internal/oteltest is the tests' SDK recorder; TestDependencyDirection
		// keeps library packages off internal test helpers.
		if len(fields) == 0 || strings.HasPrefix(fields[0], mod+"/examples/") || fields[0] == mod+"/internal/oteltest" {
			continue
		}
		checked++
		for _, dep := range fields[1:] {
			for _, banned := range telemetryBackends {
				if strings.HasPrefix(dep, banned) {
					t.Errorf("%s depends on %s: library packages use the OpenTelemetry API only", fields[0], dep)
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d packages listed; the check would pass vacuously", checked)
	}
}
