package fetch_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestImports keeps the dependency direction: fetch builds on client, sig
// and origin, and needs nothing beyond x/net/html and the OpenTelemetry API
// (its names from internal/otelx).
func TestImports(t *testing.T) {
	t.Parallel()
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{
		"github.com/fedkit/fedkit/client": true,
		"github.com/fedkit/fedkit/sig":    true,
		"github.com/fedkit/fedkit/origin": true,
		"golang.org/x/net/html":           true,
		"golang.org/x/net/html/atom":      true,
		// Telemetry: the API only (deps_test.go's TestTelemetryAPIOnly).
		"github.com/fedkit/fedkit/internal/otelx": true,
		"go.opentelemetry.io/otel/attribute":      true,
		"go.opentelemetry.io/otel/codes":          true,
		"go.opentelemetry.io/otel/metric":         true,
		"go.opentelemetry.io/otel/metric/noop":    true,
		"go.opentelemetry.io/otel/trace":          true,
	}
	for _, imp := range pkg.Imports {
		first, _, _ := strings.Cut(imp, "/")
		if !strings.Contains(first, ".") {
			continue
		}
		if !allowed[imp] {
			t.Errorf("fetch imports %s", imp)
		}
	}
}
