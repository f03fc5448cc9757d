// Package testserver starts throwaway PostgreSQL and Redis servers for tests
// on machines that have the binaries but no running server. One server of
// each kind is shared by a test binary; it is killed when the binary exits
// (Pdeathsig) or when Stop is called.
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
	running []*exec.Cmd
	dirs    []string
)

// Stop kills every server this package started and removes their data.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	for _, c := range running {
		_ = c.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = c.Process.Kill()
		}
	}
	for _, d := range dirs {
		os.RemoveAll(d)
	}
	running, dirs = nil, nil
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
func StartPostgres(ctx context.Context) (string, error) {
	initdb, pg := FindBinary("initdb"), FindBinary("postgres")
	if initdb == "" || pg == "" {
		return "", errors.New("no initdb/postgres binaries")
	}
	dir, err := os.MkdirTemp("", "fedkit-pg-")
	if err != nil {
		return "", err
	}
	os.Chmod(dir, 0o755)
	data := filepath.Join(dir, "data")
	sock := filepath.Join(dir, "sock")
	os.Mkdir(sock, 0o755)
	mu.Lock()
	dirs = append(dirs, dir)
	mu.Unlock()
	init := exec.CommandContext(ctx, initdb, "-D", data, "-U", "postgres", "-A", "trust", "--no-sync")
	if err := asUnprivileged(init, dir); err != nil {
		return "", err
	}
	if out, err := init.CombinedOutput(); err != nil {
		return "", fmt.Errorf("initdb: %v: %s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(pg, "-D", data, "-p", strconv.Itoa(port), "-h", "127.0.0.1", "-k", sock,
		"-c", "fsync=off", "-c", "max_connections=200")
	if err := asUnprivileged(cmd, dir); err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	mu.Lock()
	running = append(running, cmd)
	mu.Unlock()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if err := waitFor(ctx, addr); err != nil {
		return "", fmt.Errorf("postgres did not start: %w", err)
	}
	return "postgres://postgres@" + addr + "/postgres?sslmode=disable", nil
}

// StartRedis starts a throwaway redis-server on a free loopback port that
// keeps nothing on disk, and returns its address.
func StartRedis(ctx context.Context) (string, error) {
	bin := FindBinary("redis-server")
	if bin == "" {
		return "", errors.New("no redis-server binary")
	}
	dir, err := os.MkdirTemp("", "fedkit-redis-")
	if err != nil {
		return "", err
	}
	port, err := freePort()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	mu.Lock()
	running = append(running, cmd)
	dirs = append(dirs, dir)
	mu.Unlock()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if err := waitFor(ctx, addr); err != nil {
		return "", fmt.Errorf("redis did not start: %w", err)
	}
	return addr, nil
}

func waitFor(ctx context.Context, addr string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if Reachable(addr) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return errors.New("timed out waiting for " + addr)
}
