//go:build unix

package yamledit_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fedkit/fedkit/directory/internal/yamledit"
)

func ExampleDisable() {
	dir, _ := os.MkdirTemp("", "yamledit")
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "config.yml")
	_ = os.WriteFile(cfg, []byte("DIRECTORIES:\n  - origin: https://directory.example\n    enabled: true # on\n"), 0o600)

	changed, err := yamledit.Disable(cfg, "https://directory.example", nil)
	b, _ := os.ReadFile(cfg)
	fmt.Println(changed, err)
	fmt.Print(string(b))
	// Output:
	// true <nil>
	// DIRECTORIES:
	//   - origin: https://directory.example
	//     enabled: false # on
}

func ExampleRemove() {
	out, err := yamledit.RemoveBytes([]byte("DIRECTORIES:\n  - origin: https://directory.example\nKEEP: 1\n"), "https://directory.example")
	fmt.Print(string(out), err)
	// Output:
	// DIRECTORIES: []
	// KEEP: 1
	// <nil>
}

func ExampleDisableBytes() {
	out, _ := yamledit.DisableBytes([]byte("DIRECTORIES:\n- origin: https://directory.example\n"), "https://directory.example")
	fmt.Print(string(out))
	// Output:
	// DIRECTORIES:
	// - origin: https://directory.example
	//   enabled: false
}
