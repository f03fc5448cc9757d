package yamledit

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/goccy/go-yaml"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, origin string
		remove           bool
	}{
		{"full_disable_existing_key", "full.yml", "https://directory.argentwolf.org", false},
		{"full_disable_inserts_key", "full.yml", "https://directory.example", false},
		{"full_disable_key_before_origin", "full.yml", "https://third.example", false},
		{"full_remove_middle", "full.yml", "https://directory.example", true},
		{"full_remove_first", "full.yml", "https://directory.argentwolf.org", true},
		{"compact_disable", "compact.yml", "https://other.example", false},
		{"compact_remove", "compact.yml", "https://directory.example", true},
		{"crlf_disable", "crlf.yml", "https://directory.example", false},
		{"only_remove_last", "only.yml", "https://directory.example", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(filepath.Join("testdata", tc.in))
			if err != nil {
				t.Fatal(err)
			}
			edit := DisableBytes
			if tc.remove {
				edit = RemoveBytes
			}
			got, err := edit(src, tc.origin)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("got:\n%s\nwant:\n%s", got, want)
			}
			// The edit is a fixed point: applying it again changes nothing
			// (disable) or finds no entry (remove).
			again, err := edit(got, tc.origin)
			switch {
			case tc.remove && !errors.Is(err, ErrEntryNotFound):
				t.Fatalf("second remove err = %v, want ErrEntryNotFound", err)
			case !tc.remove && (err != nil || !bytes.Equal(again, got)):
				t.Fatalf("second disable changed the file (err %v)", err)
			}
		})
	}
}

// TestUnrelatedLinesUntouched checks, independently of the goldens, that a
// disable changes exactly one line or inserts exactly one.
func TestUnrelatedLinesUntouched(t *testing.T) {
	t.Parallel()
	src, _ := os.ReadFile("testdata/full.yml")
	for origin, inserted := range map[string]bool{
		"https://directory.argentwolf.org": false,
		"https://directory.example":        true,
		"https://third.example":            false,
	} {
		got, err := DisableBytes(src, origin)
		if err != nil {
			t.Fatal(err)
		}
		a, b := bytes.SplitAfter(src, []byte("\n")), bytes.SplitAfter(got, []byte("\n"))
		if inserted != (len(b) == len(a)+1) || (!inserted && len(a) != len(b)) {
			t.Fatalf("%s: line count %d -> %d", origin, len(a), len(b))
		}
		diff := 0
		for i, j := 0, 0; i < len(a); i, j = i+1, j+1 {
			if !bytes.Equal(a[i], b[j]) {
				diff++
				if inserted {
					if !bytes.Contains(b[j], []byte("enabled: false")) {
						t.Fatalf("%s: unexpected inserted line %q", origin, b[j])
					}
					i--
					inserted = false
					continue
				}
				if !bytes.Contains(b[j], []byte("enabled: false")) {
					t.Fatalf("%s: unexpected changed line %q", origin, b[j])
				}
			}
		}
		if diff != 1 {
			t.Fatalf("%s: %d lines differ, want 1", origin, diff)
		}
	}
}

func TestEditRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		want      error
	}{
		{"NoKey", "A: 1\n", ErrEntryNotFound},
		{"NoEntry", "DIRECTORIES:\n  - origin: https://other.example\n", ErrEntryNotFound},
		{"EmptyList", "DIRECTORIES: []\n", ErrEntryNotFound},
		{"NotYAML", "DIRECTORIES: [\n", ErrInvalidYAML},
		{"FlowList", "DIRECTORIES: [{origin: https://directory.example, enabled: true}]\n", ErrUnsupported},
		{"FlowItem", "DIRECTORIES:\n  - {origin: https://directory.example, enabled: true}\n", ErrUnsupported},
		{"DuplicateOrigin", "DIRECTORIES:\n  - origin: https://directory.example\n  - origin: https://directory.example\n", ErrUnsupported},
		{"BlockScalarEnabled", "DIRECTORIES:\n  - origin: https://directory.example\n    enabled: !!bool\n      true\n", ErrUnsupported},
		{"AnchoredEnabled", "X: &t true\nDIRECTORIES:\n  - origin: https://directory.example\n    enabled: *t\n", ErrUnsupported},
		{"MultiDocument", "DIRECTORIES:\n  - origin: https://directory.example\n---\nDIRECTORIES:\n  - origin: https://directory.example\n", ErrUnsupported},
		{"OriginNotString", "DIRECTORIES:\n  - origin: 5\n", ErrEntryNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := DisableBytes([]byte(tc.src), "https://directory.example"); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// FuzzDisableBytes: any accepted edit re-parses with the entry disabled and
// is a fixed point; nothing panics.
func FuzzDisableBytes(f *testing.F) {
	for _, n := range []string{"full.yml", "compact.yml", "crlf.yml", "only.yml"} {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "https://directory.example", false)
	}
	f.Fuzz(func(t *testing.T, src []byte, origin string, remove bool) {
		edit := DisableBytes
		if remove {
			edit = RemoveBytes
		}
		out, err := edit(src, origin)
		if err != nil {
			return
		}
		var v any
		if err := yaml.Unmarshal(out, &v); err != nil {
			t.Fatalf("accepted edit does not parse: %v", err)
		}
		if again, err := DisableBytes(out, origin); !remove && (err != nil || !bytes.Equal(again, out)) {
			t.Fatalf("disable not a fixed point: %v", err)
		}
	})
}

// TestDisableNullEnabled: `enabled:` with no value (or null, ~) is already
// disabled, as the configuration parser reads it: Disable leaves the file
// alone instead of refusing the layout, and Remove still removes the entry.
func TestDisableNullEnabled(t *testing.T) {
	t.Parallel()
	for name, v := range map[string]string{"empty": "", "null": " null", "tilde": " ~", "empty with comment": " # off for now"} {
		src := []byte("DIRECTORIES:\n  - origin: https://directory.example\n    enabled:" + v + "\n  - origin: https://other.example\n    enabled: true\n")
		got, err := DisableBytes(src, "https://directory.example")
		if err != nil || !bytes.Equal(got, src) {
			t.Errorf("%s: DisableBytes = %q, %v; want the source unchanged", name, got, err)
		}
		got, err = RemoveBytes(src, "https://directory.example")
		if err != nil || bytes.Contains(got, []byte("directory.example\n")) || !bytes.Contains(got, []byte("https://other.example")) {
			t.Errorf("%s: RemoveBytes = %q, %v", name, got, err)
		}
	}
}
