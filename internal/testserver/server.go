package testserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Server is one throwaway database server a test owns, so the test can make
// it fail: Stop shuts it down cleanly, Kill kills it with SIGKILL (every
// process of it, as a crash or an OOM kill would), and Start brings it back
// on the same port and data directory. Close kills it and removes its data.
// It never touches a server it did not start.
type Server struct {
	// Addr is host:port on loopback.
	Addr string
	// URL is a connection URL (postgres://... or redis://...).
	URL string

	name string
	dir  string // removed by Close
	bin  string
	args []string
	// stop is the signal of a clean shutdown: SIGINT is Postgres's fast
	// shutdown, SIGTERM Redis's.
	stop  syscall.Signal
	setup func(*exec.Cmd) error
	ready func(context.Context) bool // besides accepting TCP, when set

	mu  sync.Mutex
	cmd *exec.Cmd
}

// NewPostgres starts a PostgreSQL server of the test's own, with trust auth
// on a free loopback port and its data in a fresh directory. Its URL names
// database postgres and user postgres. Call Close when done.
func NewPostgres(ctx context.Context) (*Server, error) {
	initdb, pg := FindBinary("initdb"), FindBinary("postgres")
	if initdb == "" || pg == "" {
		return nil, errors.New("no initdb/postgres binaries")
	}
	dir, err := os.MkdirTemp("", "fedkit-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{name: "postgres", dir: dir, bin: pg, stop: syscall.SIGINT}
	fail := func(err error) (*Server, error) { os.RemoveAll(dir); return nil, err }
	os.Chmod(dir, 0o755)
	data := filepath.Join(dir, "data")
	sock := filepath.Join(dir, "sock")
	os.Mkdir(sock, 0o755)
	init := exec.CommandContext(ctx, initdb, "-D", data, "-U", "postgres", "-A", "trust", "--no-sync")
	if err := asUnprivileged(init, dir); err != nil {
		return fail(err)
	}
	if out, err := init.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %v: %s", err, out))
	}
	port, err := freePort()
	if err != nil {
		return fail(err)
	}
	s.Addr = "127.0.0.1:" + strconv.Itoa(port)
	s.URL = "postgres://postgres@" + s.Addr + "/postgres?sslmode=disable"
	// fsync=off costs nothing a test can see: a SIGKILL of the server loses
	// only what never reached the kernel (WAL buffers, an asynchronous
	// commit), which is what a crash test wants to lose.
	s.args = []string{"-D", data, "-p", strconv.Itoa(port), "-h", "127.0.0.1", "-k", sock,
		"-c", "fsync=off", "-c", "max_connections=200"}
	s.setup = func(cmd *exec.Cmd) error { return asUnprivileged(cmd, dir) }
	// Postgres accepts connections while it recovers from a crash, only to
	// refuse them (57P03); pg_isready tells when it takes them.
	if isready := FindBinary("pg_isready"); isready != "" {
		s.ready = func(ctx context.Context) bool {
			return exec.CommandContext(ctx, isready, "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-t", "1").Run() == nil
		}
	}
	if err := s.Start(ctx); err != nil {
		return fail(err)
	}
	return s, nil
}

// NewRedis starts a redis-server of the test's own on a free loopback port,
// keeping nothing on disk unless extra arguments (such as "--appendonly",
// "yes") say otherwise; extra arguments come last and so win. Call Close
// when done.
func NewRedis(ctx context.Context, extra ...string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return newRedis(ctx, port, extra...)
}

func newRedis(ctx context.Context, port int, extra ...string) (*Server, error) {
	bin := FindBinary("redis-server")
	if bin == "" {
		return nil, errors.New("no redis-server binary")
	}
	dir, err := os.MkdirTemp("", "fedkit-redis-")
	if err != nil {
		return nil, err
	}
	s := &Server{name: "redis", dir: dir, bin: bin, stop: syscall.SIGTERM}
	s.Addr = "127.0.0.1:" + strconv.Itoa(port)
	s.URL = "redis://" + s.Addr + "/0"
	s.args = append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir}, extra...)
	if err := s.Start(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// Start starts the server again, on its port and data directory, and waits
// until it accepts connections. It fails if the server is running.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return fmt.Errorf("%s on %s is running", s.name, s.Addr)
	}
	cmd := exec.Command(s.bin, s.args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if s.setup != nil {
		if err := s.setup(cmd); err != nil {
			return err
		}
	}
	// The server's own log, kept across restarts, says why a start failed.
	// A file, not a pipe: no goroutine copies it.
	logPath := filepath.Join(s.dir, "server.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own descriptor
	cmd.Stdout, cmd.Stderr = logf, logf
	// A restarted server may find its port still held for a moment by the
	// processes of the one killed; waitFor covers that too.
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd = cmd
	if err := waitFor(ctx, s.Addr, func() bool { return exited(cmd) }); err != nil {
		s.killLocked()
		return fmt.Errorf("%s did not start: %w; its log ends:\n%s", s.name, err, logTail(logPath))
	}
	for deadline := time.Now().Add(time.Minute); s.ready != nil && !s.ready(ctx); {
		if exited(cmd) || time.Now().After(deadline) || ctx.Err() != nil {
			s.killLocked()
			return fmt.Errorf("%s did not get ready; its log ends:\n%s", s.name, logTail(logPath))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// logTail returns the last lines of a server's log.
func logTail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// Kill kills every process of the server with SIGKILL and waits for the
// server process to exit; its data directory stays for Start. Killing a
// server that is not running does nothing.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked()
}

func (s *Server) killLocked() {
	if s.cmd == nil {
		return
	}
	// Every process of the server dies at once, as in a crash or an OOM
	// kill of its container. Postgres's backends and helpers each run in a
	// session of their own (setsid), so a process-group kill misses them:
	// the postmaster is frozen (it forks no more), its children are killed
	// one by one, then it. A backend left running would hold the shared
	// memory and keep the restart from starting ("pre-existing shared
	// memory block is still in use").
	pid := s.cmd.Process.Pid
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	kids := children(pid)
	for _, k := range kids {
		_ = syscall.Kill(k, syscall.SIGKILL)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for deadline := time.Now().Add(30 * time.Second); !exited(s.cmd) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	s.waitGroupGone(-pid)
	waitGone(kids)
	s.cmd = nil
}

// children lists the processes whose parent is pid, from /proc.
func children(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _ := procState(n); ppid == pid {
			out = append(out, n)
		}
	}
	return out
}

// procState returns a process's parent and state letter from
// /proc/PID/stat; 0 and "" when it is gone.
func procState(pid int) (ppid int, state string) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, ""
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	rest := string(b)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	f := strings.Fields(rest)
	if len(f) < 2 {
		return 0, ""
	}
	ppid, _ = strconv.Atoi(f[1])
	return ppid, f[0]
}

// waitGone waits, briefly, until each process has exited (gone, or a
// zombie: its memory is released).
func waitGone(pids []int) {
	for _, p := range pids {
		for i := 0; i < 100; i++ {
			if _, st := procState(p); st == "" || st == "Z" || st == "X" {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// exited reaps cmd's process if it has exited, without blocking. No
// goroutine waits on a server: goleak, in the packages' TestMain, would
// count it, and a server outlives the tests that share it.
func exited(cmd *exec.Cmd) bool {
	var ws syscall.WaitStatus
	pid, err := syscall.Wait4(cmd.Process.Pid, &ws, syscall.WNOHANG, nil)
	return pid == cmd.Process.Pid || errors.Is(err, syscall.ECHILD)
}

// Stop shuts the server down cleanly and waits for it, killing it after
// 10 s. Its data directory stays for Start.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(s.stop)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if exited(s.cmd) {
			s.waitGroupGone(-s.cmd.Process.Pid)
			s.cmd = nil
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.killLocked()
}

// waitGroupGone waits, briefly, until no process is left in the group:
// the leader's exit does not wait for its children.
func (s *Server) waitGroupGone(pgid int) {
	for i := 0; i < 100; i++ {
		if err := syscall.Kill(pgid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		time.Sleep(20 * time.Millisecond)
	}
}

// Running reports whether the server process is up.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// Close kills the server and removes its data.
func (s *Server) Close() {
	s.Kill()
	os.RemoveAll(s.dir)
}
