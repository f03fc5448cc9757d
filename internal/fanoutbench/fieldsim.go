package fanoutbench

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/fedkit/fedkit/internal/fedsim"
)

// fieldSimEnv, set in a child's environment to a JSON FieldScenario, makes
// the test binary play that scenario's fediverse instead of running tests.
//
// With FieldOpts.ChildSim the simulation runs in a child so that
// peak_heap_MiB is the Deliverer's heap alone. A child, not a heap
// estimate subtracted afterwards, because two heaps in one process share
// one GC cycle and cannot be told apart from the outside.
const fieldSimEnv = "FEDKIT_FANOUTBENCH_FIELDSIM"

// init serves as the child when fieldSimEnv is set. It runs before the
// testing package parses flags, so any test binary that links fanoutbench
// can be the child; the parent also passes -test.run=^$ -test.bench=^$ so
// that a binary without it would run nothing rather than the benchmarks
// again.
func init() {
	if v := os.Getenv(fieldSimEnv); v != "" {
		if err := serveFieldSim(v, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "fanoutbench field simulation:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// serveFieldSim plays the scenario spec (JSON) on a loopback fedsim, writes
// its port as the first line of out, then answers each line read from in
// with its process CPU time in nanoseconds, so the parent's
// cpu_share_ratio still counts the simulation's CPU. It returns when in
// ends: when the parent closes the pipe or dies, so the child never
// outlives it.
func serveFieldSim(spec string, in io.Reader, out io.Writer) error {
	var sc FieldScenario
	if err := json.Unmarshal([]byte(spec), &sc); err != nil {
		return err
	}
	sim, err := newFieldSim(sc)
	if err != nil {
		return err
	}
	defer sim.Close()
	if _, err := fmt.Fprintln(out, sim.Port()); err != nil {
		return err
	}
	r := bufio.NewScanner(in)
	for r.Scan() {
		if _, err := fmt.Fprintln(out, int64(processCPU())); err != nil {
			return err
		}
	}
	return nil
}

// newFieldSim starts a fedsim playing every host of sc with its profile.
func newFieldSim(sc FieldScenario) (*fedsim.Sim, error) {
	sim, err := fedsim.New(&fedsim.Config{Default: fedsim.Healthy(sc.Latency, sc.Jitter)})
	if err != nil {
		return nil, err
	}
	for i := range sc.Hosts {
		sim.SetHost(fieldHostName(i), sc.profile(i))
	}
	return sim, nil
}

func fieldHostName(i int) string { return "h" + strconv.Itoa(i) + ".example" }

// fieldSim is the scenario's fediverse as the benchmark sees it: a port on
// 127.0.0.1, and the simulation's CPU time so far.
type fieldSim struct {
	port  int
	cpu   func() time.Duration
	close func() error
}

// startFieldSim runs sc's simulation: in a child process (this test
// binary, re-executed) unless inProcess, pinned with taskset to cpus when
// they are given.
func startFieldSim(sc FieldScenario, inProcess bool, cpus string) (*fieldSim, error) {
	if inProcess {
		sim, err := newFieldSim(sc)
		if err != nil {
			return nil, err
		}
		// Its CPU is this process's, counted already.
		return &fieldSim{port: sim.Port(), cpu: func() time.Duration { return 0 }, close: sim.Close}, nil
	}
	spec, err := json.Marshal(sc)
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{exe, "-test.run=^$", "-test.bench=^$"}
	if cpus != "" {
		args = append([]string{"taskset", "-c", cpus}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), fieldSimEnv+"="+string(spec))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := bufio.NewScanner(stdout)
	readInt := func() (int64, error) {
		if !lines.Scan() {
			return 0, errors.Join(errors.New("the simulation child ended"), lines.Err())
		}
		return strconv.ParseInt(strings.TrimSpace(lines.Text()), 10, 64)
	}
	stop := func() error {
		_ = stdin.Close() // the child's stdin ends: it closes the simulation and exits
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			return <-done
		}
	}
	port, err := readInt()
	if err != nil {
		_ = stop()
		return nil, err
	}
	cpu := func() time.Duration {
		if _, err := io.WriteString(stdin, "\n"); err != nil {
			return 0
		}
		n, err := readInt()
		if err != nil {
			return 0
		}
		return time.Duration(n)
	}
	return &fieldSim{port: int(port), cpu: cpu, close: stop}, nil
}
