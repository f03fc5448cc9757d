//go:build unix

package yamledit

import (
	"fmt"
	"os"
	"syscall"
)

// openNoFollow opens path for reading. O_NOFOLLOW and O_NONBLOCK close the
// gap between Lstat and open: a swapped-in link fails, a swapped-in FIFO
// does not block.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// matchOwnerMode gives f the permission bits and owner of like. A failed
// chown is an error: silently handing the config to another user is worse
// than not editing it.
func matchOwnerMode(f *os.File, like os.FileInfo) error {
	if err := f.Chmod(like.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky)); err != nil {
		return err
	}
	want, ok := like.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	have, err := f.Stat()
	if err != nil {
		return err
	}
	if st, ok := have.Sys().(*syscall.Stat_t); ok && st.Uid == want.Uid && st.Gid == want.Gid {
		return nil
	}
	if err := f.Chown(int(want.Uid), int(want.Gid)); err != nil {
		return fmt.Errorf("yamledit: keep config owner: %w", err)
	}
	// chown may clear setuid/setgid bits; restore them.
	return f.Chmod(like.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky))
}

// syncDir makes the renames durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("yamledit: sync directory: %w", err)
	}
	return nil
}
