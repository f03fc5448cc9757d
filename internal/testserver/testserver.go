// Package testserver starts throwaway PostgreSQL and Redis servers for tests
// on machines that have the binaries but no running server. One server of
// each kind is shared by a test binary; it is killed when the binary exits
// (Pdeathsig) or when Stop is called.
//
// A failure test starts servers of its own instead (NewPostgres, NewRedis,
// NewCluster) and makes them fail: Server.Kill (SIGKILL of every process of
// the server), Server.Stop (a clean shutdown) and Server.Start (again, on
// the same port and data directory). Nothing here touches a server it did
// not start, such as a machine's own on 5432 or 6379.
package testserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Reachable reports whether something accepts TCP connections at addr.
func Reachable(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

var (
	mu      sync.Mutex
	running []*Server
)

// Stop kills every server StartPostgres and StartRedis started and removes
// their data. Servers from NewPostgres, NewRedis and NewCluster are their
// caller's to Close.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	for _, s := range running {
		s.Stop()
		s.Close()
	}
	running = nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FindBinary looks for name on PATH and in Debian's versioned PostgreSQL
// folders, newest version first.
func FindBinary(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	sort.Slice(matches, func(i, j int) bool { return version(matches[i]) > version(matches[j]) })
	if len(matches) > 0 {
		return matches[0]
	}
	return ""
}

func version(p string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(p))))
	return v
}

// asUnprivileged runs cmd as the postgres user when we are root, because
// PostgreSQL refuses to run as root.
func asUnprivileged(cmd *exec.Cmd, dir string) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("running as root and no postgres user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	}); err != nil {
		return err
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	return nil
}

// StartPostgres starts a throwaway PostgreSQL with trust auth on a free
// loopback port and returns its URL (database postgres, user postgres).
// Stop ends it.
func StartPostgres(ctx context.Context) (string, error) {
	s, err := NewPostgres(ctx)
	if err != nil {
		return "", err
	}
	mu.Lock()
	running = append(running, s)
	mu.Unlock()
	return s.URL, nil
}

// StartRedis starts a throwaway redis-server on a free loopback port that
// keeps nothing on disk, and returns its address. Stop ends it.
func StartRedis(ctx context.Context) (string, error) {
	s, err := NewRedis(ctx)
	if err != nil {
		return "", err
	}
	mu.Lock()
	running = append(running, s)
	mu.Unlock()
	return s.Addr, nil
}

// waitFor waits until addr accepts connections, giving up when the process
// behind it has exited (exited closed) or after 30 s.
func waitFor(ctx context.Context, addr string, exited func() bool) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if Reachable(addr) {
			return nil
		}
		if exited() {
			return errors.New("the server exited")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return errors.New("timed out waiting for " + addr)
}
