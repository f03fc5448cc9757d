package fanoutbench

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestFieldSimChild runs a scenario's simulation in a child process and
// asks it for a healthy host and a flaky one: the child answers on
// loopback as the profiles say, reports its CPU time, and exits when
// closed.
func TestFieldSimChild(t *testing.T) {
	sc := FieldScenario{Name: "tiny", Inboxes: 4, Hosts: 2, Latency: time.Millisecond, FlakyShare: 0.5, FlakyP: 1}
	sim, err := startFieldSim(sc, false, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int{0: http.StatusInternalServerError, 1: http.StatusAccepted} // host 0 is the flaky one (r = 0)
	for i, status := range want {
		req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:"+strconv.Itoa(sim.port)+"/inbox", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = fieldHostName(i)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != status {
			t.Errorf("%s answered %d, want %d", req.Host, resp.StatusCode, status)
		}
	}
	if cpu := sim.cpu(); cpu <= 0 && processCPU() > 0 {
		t.Errorf("child CPU time %v, want > 0", cpu)
	}
	http.DefaultClient.CloseIdleConnections()
	if err := sim.close(); err != nil {
		t.Errorf("close: %v", err)
	}
}
