package fanoutbench

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// apartCPUs returns, as a taskset list, the online cores this process may
// not run on, for a simulation child of its own cores. It fails when the
// process may use every core (run the benchmark under taskset -c 0) or
// where Linux's /proc and /sys do not say.
func apartCPUs() (string, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "", err
	}
	var own []int
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			if own, err = parseCPUList(v); err != nil {
				return "", err
			}
		}
	}
	online, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return "", err
	}
	all, err := parseCPUList(string(online))
	if err != nil {
		return "", err
	}
	var rest []string
	for _, c := range all {
		if !slices.Contains(own, c) {
			rest = append(rest, strconv.Itoa(c))
		}
	}
	if len(own) == 0 || len(rest) == 0 {
		return "", errors.New("fanoutbench: this process may run on every core: run it under taskset -c 0, and the simulation gets the others")
	}
	return strings.Join(rest, ","), nil
}

// parseCPUList parses a kernel CPU list such as "0-3,6".
func parseCPUList(s string) ([]int, error) {
	var out []int
	for part := range strings.SplitSeq(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("fanoutbench: CPU list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("fanoutbench: CPU list %q", s)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}
