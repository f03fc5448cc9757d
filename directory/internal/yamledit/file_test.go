//go:build unix

package yamledit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

const target = "https://directory.example"

var errCrash = errors.New("injected crash")

func setupFile(t *testing.T, mode os.FileMode) (path string, src []byte) {
	t.Helper()
	src, err := os.ReadFile("testdata/full.yml")
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "config.yml")
	if err := os.WriteFile(path, src, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // umask-proof
		t.Fatal(err)
	}
	return path, src
}

func read(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDisableFile(t *testing.T) {
	t.Parallel()
	path, src := setupFile(t, 0o640)
	changed, err := Disable(path, target, nil)
	if err != nil || !changed {
		t.Fatalf("Disable = %v, %v", changed, err)
	}
	want, _ := DisableBytes(src, target)
	if got := read(t, path); !bytes.Equal(got, want) {
		t.Fatalf("config:\n%s", got)
	}
	if got := read(t, BackupPath(path)); !bytes.Equal(got, src) {
		t.Fatal("backup is not the original")
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode = %v, want 0640", fi.Mode())
	}
	// No temporary file is left behind on success.
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 2 {
		t.Fatalf("directory holds %d files, want config and backup", len(ents))
	}
	// Already disabled: nothing is written, the backup stays the original.
	if changed, err := Disable(path, target, nil); err != nil || changed {
		t.Fatalf("second Disable = %v, %v", changed, err)
	}
	// Remove keeps the pre-disable backup.
	if changed, err := Remove(path, target, nil); err != nil || !changed {
		t.Fatalf("Remove = %v, %v", changed, err)
	}
	if got := read(t, BackupPath(path)); !bytes.Equal(got, src) {
		t.Fatal("Remove replaced the pre-disable backup")
	}
	if bytes.Contains(read(t, path), []byte(`"`+target+`"`)) {
		t.Fatal("entry still present after Remove")
	}
}

func TestOwnerKept(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("changing a file's owner needs root")
	}
	path, _ := setupFile(t, 0o600)
	if err := os.Chown(path, 4321, 8765); err != nil {
		t.Fatal(err)
	}
	if _, err := Disable(path, target, nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, BackupPath(path)} {
		st := mustStat(t, p)
		if st.Uid != 4321 || st.Gid != 8765 || st.Mode&0o777 != 0o600 {
			t.Fatalf("%s: uid %d gid %d mode %o", p, st.Uid, st.Gid, st.Mode&0o777)
		}
	}
}

func mustStat(t *testing.T, p string) *syscall.Stat_t {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t)
}

func TestRefusesSymlinkAndFIFO(t *testing.T) {
	t.Parallel()
	path, src := setupFile(t, 0o644)
	link := filepath.Join(filepath.Dir(path), "link.yml")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Disable(link, target, nil); !errors.Is(err, ErrSymlink) {
		t.Fatalf("symlink err = %v, want ErrSymlink", err)
	}
	if !bytes.Equal(read(t, path), src) {
		t.Fatal("link target changed")
	}
	fifo := filepath.Join(filepath.Dir(path), "fifo.yml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if _, err := Disable(fifo, target, nil); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("fifo err = %v, want ErrNotRegular", err)
	}
	if _, err := Remove(filepath.Dir(path), target, nil); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("directory err = %v, want ErrNotRegular", err)
	}
}

// TestCrashAtEachStep stops the edit at every step as a crash would and
// checks the config is the old or the new file, whole, every time.
func TestCrashAtEachStep(t *testing.T) {
	t.Parallel()
	for _, step := range []Step{StepBeforeTempWrite, StepAfterTempWrite, StepAfterBackup, StepAfterRename} {
		t.Run(step.String(), func(t *testing.T) {
			t.Parallel()
			path, src := setupFile(t, 0o644)
			want, _ := DisableBytes(src, target)
			_, err := Disable(path, target, &Opts{Hook: func(s Step) error {
				if s == step {
					return errCrash
				}
				return nil
			}})
			if !errors.Is(err, errCrash) {
				t.Fatalf("err = %v, want the injected crash", err)
			}
			got := read(t, path)
			switch {
			case step == StepAfterRename && !bytes.Equal(got, want):
				t.Fatalf("after rename the config is not the new file:\n%s", got)
			case step != StepAfterRename && !bytes.Equal(got, src):
				t.Fatalf("before rename the config is not the old file:\n%s", got)
			}
			if step >= StepAfterBackup && !bytes.Equal(read(t, BackupPath(path)), src) {
				t.Fatal("backup is not the original")
			}
			// Recovery: re-running the edit completes it from any crash point.
			if _, err := Disable(path, target, nil); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(read(t, path), want) {
				t.Fatal("re-run did not reach the new file")
			}
			// and leaves nothing behind: no temporary file of either run,
			// and a backup that is the original, not the live file.
			assertOnly(t, path, BackupPath(path))
			if !bytes.Equal(read(t, BackupPath(path)), src) {
				t.Fatal("backup is not the original after recovery")
			}
			if a, b := mustStat(t, path), mustStat(t, BackupPath(path)); a.Ino == b.Ino {
				t.Fatal("backup is still a hard link of the live file")
			}
		})
	}
}

// assertOnly fails unless path's directory holds exactly the given files.
func assertOnly(t *testing.T, paths ...string) {
	t.Helper()
	des, err := os.ReadDir(filepath.Dir(paths[0]))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, p := range paths {
		want[filepath.Base(p)] = true
	}
	for _, de := range des {
		if !want[de.Name()] {
			t.Errorf("leftover file %s", de.Name())
		}
	}
	if len(des) != len(paths) {
		t.Errorf("%d files, want %d", len(des), len(paths))
	}
}

// TestBackupAlreadyLinked: a crash after the backup step leaves the backup
// hard-linked to the live file. The next run neither links it again (a
// rename of the new link onto the same inode is a no-op that would leave
// `.config.yml.bak.<hex>.tmp` behind) nor loses the original.
func TestBackupAlreadyLinked(t *testing.T) {
	t.Parallel()
	path, src := setupFile(t, 0o644)
	if err := os.Link(path, BackupPath(path)); err != nil {
		t.Fatal(err)
	}
	if _, err := Disable(path, target, nil); err != nil {
		t.Fatal(err)
	}
	assertOnly(t, path, BackupPath(path))
	if !bytes.Equal(read(t, BackupPath(path)), src) {
		t.Fatal("backup is not the original")
	}
}

// TestSweepsStaleTemps: temporary siblings an earlier crashed edit left
// (`.config.yml.<random>.tmp`, `.config.yml.bak.<hex>.tmp`) are removed at
// the start of the next edit, also when that edit finds nothing to change;
// other files are not touched.
func TestSweepsStaleTemps(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Disable", "DisableUnchanged", "Remove"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path, _ := setupFile(t, 0o644)
			dir := filepath.Dir(path)
			if name == "DisableUnchanged" {
				if _, err := Disable(path, target, nil); err != nil {
					t.Fatal(err)
				}
			}
			keep := []string{path, filepath.Join(dir, "other.yml"), filepath.Join(dir, ".config.yml.tmp"),
				filepath.Join(dir, ".other.yml.1.tmp"), filepath.Join(dir, "config.yml.1.tmp")}
			for _, f := range append(keep[1:], filepath.Join(dir, ".config.yml.123456.tmp"),
				filepath.Join(dir, ".config.yml.bak.0123456789abcdef.tmp")) {
				if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			if name == "Remove" {
				_, err = Remove(path, target, nil)
			} else {
				_, err = Disable(path, target, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			assertOnly(t, append(keep, BackupPath(path))...)
		})
	}
}

func TestStepString(t *testing.T) {
	t.Parallel()
	if StepAfterBackup.String() != "after-backup" || Step(99).String() != "Step(99)" {
		t.Fatal("Step.String")
	}
}

// TestCrashTwiceThenRecover: two crashed edits in a row, at any pair of
// steps, then a clean one: the config is the intended edit, the backup is
// the original on its own inode, and nothing else is left in the
// directory.
func TestCrashTwiceThenRecover(t *testing.T) {
	t.Parallel()
	steps := []Step{StepBeforeTempWrite, StepAfterTempWrite, StepAfterBackup, StepAfterRename}
	for _, first := range steps {
		for _, second := range steps {
			t.Run(first.String()+"/"+second.String(), func(t *testing.T) {
				t.Parallel()
				path, src := setupFile(t, 0o640)
				want, _ := DisableBytes(src, target)
				for _, at := range []Step{first, second} {
					_, err := Disable(path, target, &Opts{Hook: func(s Step) error {
						if s == at {
							return errCrash
						}
						return nil
					}})
					// A run that finds the edit already made has nothing to
					// crash in.
					if err != nil && !errors.Is(err, errCrash) {
						t.Fatal(err)
					}
					if got := read(t, path); !bytes.Equal(got, src) && !bytes.Equal(got, want) {
						t.Fatalf("config is neither the original nor the edit:\n%s", got)
					}
				}
				if _, err := Disable(path, target, nil); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(read(t, path), want) || !bytes.Equal(read(t, BackupPath(path)), src) {
					t.Fatal("config or backup wrong after recovery")
				}
				if a, b := mustStat(t, path), mustStat(t, BackupPath(path)); a.Ino == b.Ino {
					t.Fatal("backup shares the live file's inode")
				}
				assertOnly(t, path, BackupPath(path))
			})
		}
	}
}
