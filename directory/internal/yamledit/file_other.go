//go:build !unix

package yamledit

import "os"

// openNoFollow opens path for reading. Without O_NOFOLLOW the Lstat before
// it and the SameFile check after it are the guard.
func openNoFollow(path string) (*os.File, error) { return os.Open(path) }

// matchOwnerMode keeps the permission bits; ownership is not a file
// attribute this package can carry over here.
func matchOwnerMode(f *os.File, like os.FileInfo) error { return f.Chmod(like.Mode() & os.ModePerm) }

// syncDir is a no-op: directories cannot be synced on this platform, and
// the rename itself is atomic.
func syncDir(string) error { return nil }
