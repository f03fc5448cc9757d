package yamledit

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// MaxSize bounds the configuration file this editor reads.
const MaxSize = 4 << 20

// BackupSuffix names the copy of the original kept beside the config.
const BackupSuffix = ".activity-relay.bak"

var (
	// ErrSymlink: the config path is a symbolic link. Editing through it
	// would replace the link, not its target, so it is refused.
	ErrSymlink = errors.New("yamledit: config is a symbolic link")
	// ErrNotRegular: the config path is a FIFO, device, directory or socket.
	ErrNotRegular = errors.New("yamledit: config is not a regular file")
	// ErrTooLarge: the config exceeds MaxSize.
	ErrTooLarge = errors.New("yamledit: config too large")
	// ErrChanged: the file was replaced while being edited.
	ErrChanged = errors.New("yamledit: config changed during the edit")
)

// Step names a point of a durable edit, for crash-injection tests.
type Step int

// The steps, in order.
const (
	StepBeforeTempWrite Step = iota + 1
	StepAfterTempWrite
	StepAfterBackup
	StepAfterRename
)

func (s Step) String() string {
	switch s {
	case StepBeforeTempWrite:
		return "before-temp-write"
	case StepAfterTempWrite:
		return "after-temp-write"
	case StepAfterBackup:
		return "after-backup"
	case StepAfterRename:
		return "after-rename"
	}
	return fmt.Sprintf("Step(%d)", int(s))
}

// Opts tunes one edit. The zero value is usable.
type Opts struct {
	// Hook runs at each Step. When it returns an error the edit stops at
	// once and leaves every file exactly as a crash at that point would
	// (temporary files included), returning the error.
	Hook func(Step) error
}

// BackupPath is where the original of config is kept.
func BackupPath(config string) string { return config + BackupSuffix }

// Disable durably sets `enabled: false` for the origin's entry of the YAML
// file at path, keeping the original as BackupPath(path). It reports
// whether the file changed; an entry already disabled is left alone.
func Disable(path, origin string, opts *Opts) (bool, error) {
	return editFile(path, opts, func(b []byte) ([]byte, error) { return DisableBytes(b, origin) }, true)
}

// Remove durably deletes the origin's entry. An existing backup (the
// pre-disable original) is kept; one is made only when none exists.
func Remove(path, origin string, opts *Opts) (bool, error) {
	return editFile(path, opts, func(b []byte) ([]byte, error) { return RemoveBytes(b, origin) }, false)
}

func hook(o *Opts, s Step) error {
	if o == nil || o.Hook == nil {
		return nil
	}
	if err := o.Hook(s); err != nil {
		return fmt.Errorf("yamledit: stopped at %s: %w", s, err)
	}
	return nil
}

// checkRegular refuses symlinks and non-regular files without opening them,
// so a FIFO can never block the reader.
func checkRegular(path string) (os.FileInfo, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil, ErrSymlink
	}
	if !fi.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	return fi, nil
}

func editFile(path string, opts *Opts, fn func([]byte) ([]byte, error), replaceBackup bool) (changed bool, err error) {
	fi, err := checkRegular(path)
	if err != nil {
		return false, err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	sweepTemps(dir, base)
	f, err := openNoFollow(path)
	if err != nil {
		return false, err
	}
	ofi, err := f.Stat()
	if err != nil {
		f.Close()
		return false, err
	}
	if !os.SameFile(fi, ofi) || !ofi.Mode().IsRegular() {
		f.Close()
		return false, ErrChanged
	}
	src, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	f.Close()
	if err != nil {
		return false, err
	}
	if len(src) > MaxSize {
		return false, ErrTooLarge
	}
	out, err := fn(src)
	if err != nil {
		return false, err
	}
	if bytes.Equal(out, src) {
		return false, nil
	}
	if err := hook(opts, StepBeforeTempWrite); err != nil {
		return false, err
	}
	tmp, err := writeTemp(dir, base, out, ofi)
	if err != nil {
		return false, err
	}
	if err := hook(opts, StepAfterTempWrite); err != nil {
		return false, err
	}
	bak := BackupPath(path)
	bfi, statErr := os.Lstat(bak)
	// A crash after the backup step of an earlier run left bak a hard link
	// of the file we just read: it already is the original.
	sameAsLive := statErr == nil && os.SameFile(bfi, ofi)
	if (replaceBackup && !sameAsLive) || errors.Is(statErr, os.ErrNotExist) {
		if err := backup(path, bak, dir, base, src, ofi); err != nil {
			os.Remove(tmp)
			return false, err
		}
	}
	if err := hook(opts, StepAfterBackup); err != nil {
		return false, err
	}
	// A concurrent replacement since our read would be silently lost.
	if now, err := os.Lstat(path); err != nil || !os.SameFile(now, ofi) {
		os.Remove(tmp)
		return false, ErrChanged
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return false, err
	}
	if err := hook(opts, StepAfterRename); err != nil {
		return true, err
	}
	return true, syncDir(dir)
}

// writeTemp writes data to a new same-directory file carrying the mode and
// owner of like, synced before it is closed.
func writeTemp(dir, base string, data []byte, like os.FileInfo) (name string, err error) {
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return "", err
	}
	name = f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(name)
		}
	}()
	if err := matchOwnerMode(f, like); err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	return name, f.Close()
}

// backup makes bak the original file. A hard link keeps its inode, owner
// and mode exactly; a copy is the fallback where links are unsupported. It
// lands under a temporary name first so bak is never partial.
func backup(path, bak, dir, base string, src []byte, like os.FileInfo) error {
	tmp := filepath.Join(dir, "."+base+".bak."+randSuffix()+".tmp")
	if err := os.Link(path, tmp); err != nil {
		name, werr := writeTemp(dir, base, src, like)
		if werr != nil {
			return werr
		}
		tmp = name
	}
	if err := os.Rename(tmp, bak); err != nil {
		os.Remove(tmp)
		return err
	}
	// rename(2) of a link onto another link of the same inode succeeds
	// without removing the source; make sure no temporary name survives.
	if _, err := os.Lstat(tmp); err == nil {
		os.Remove(tmp)
	}
	return nil
}

// sweepTemps removes the temporary siblings (".BASE.*.tmp") a crashed
// earlier edit of BASE left behind: edit temporaries and backup links.
// Edits of one configuration are serialised by the Directory lease, so
// none of them belongs to a live edit; were one to, that edit's rename
// fails cleanly and the live file stays whole. Best effort: a sibling that
// cannot be removed does not stop the edit.
func sweepTemps(dir, base string) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := "." + base + "."
	for _, de := range des {
		n := de.Name()
		if len(n) > len(prefix)+len(".tmp") && strings.HasPrefix(n, prefix) && strings.HasSuffix(n, ".tmp") && de.Type().IsRegular() {
			os.Remove(filepath.Join(dir, n))
		}
	}
}

func randSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
