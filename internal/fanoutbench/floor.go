package fanoutbench

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/sig"
)

// BenchmarkFieldFloor measures the floor under BenchmarkFanoutField's
// cost outside the signatures: sc's requests, each the bytes of one
// signed delivery built before the timer starts, written on raw TCP
// connections to the same simulation (in process, as BenchmarkFanoutField
// runs it) and their answers read, over as many connections at once as
// the Deliverer keeps (sc.Hosts × PerHostDefault), every host healthy.
// No HTTP client, no signing, no queue: what is left is the simulated
// servers' work, both sides' loopback TCP in the kernel, the goroutine
// wake-ups and the timers, which any sender on these cores pays.
//
// It reports floor_cpu_ratio, the process CPU per request over the CPU
// per raw rsa.SignPKCS1v15 signature measured in the same run (2 s right
// before and after), and floor_cpu_us, the CPU per request itself. Set
// against field_ratio's bound it tells how much of a signature's cost is
// left for everything a real sender does: for a fan-out of T seconds of
// signing and one latency L after the last signature, field_ratio >= f
// needs the per-delivery cost outside the signature under
// (1/f - 1) - L/T of a signature, of which this floor is already spent.
func BenchmarkFieldFloor(b *testing.B, sc FieldScenario) {
	b.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	sc.TarpitShare, sc.SlowShare, sc.FlakyShare = 0, 0, 0
	sim, err := startFieldSim(sc, true, "")
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := sim.close(); err != nil {
			b.Errorf("closing the simulation: %v", err)
		}
	}()
	signer, err := sig.NewSigner(key, fanoutKeyID, nil)
	if err != nil {
		b.Fatal(err)
	}
	conns := sc.Hosts * deliver.PerHostDefault
	reqs := make([][]byte, sc.Hosts)
	for i := range reqs {
		if reqs[i], err = floorRequest(signer, fieldHostName(i)+":"+strconv.Itoa(sim.port)); err != nil {
			b.Fatal(err)
		}
	}
	var ratios, costs []float64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		_, cpuSignsBefore := rawSigns(key, fanoutSignPhase)
		b.StartTimer()
		cpu := processCPU()
		if err := floorExchanges(sim.port, reqs, conns, sc.Inboxes); err != nil {
			b.Fatal(err)
		}
		used := processCPU() - cpu
		b.StopTimer()
		_, cpuSignsAfter := rawSigns(key, fanoutSignPhase)
		b.StartTimer()
		if used <= 0 || cpuSignsBefore <= 0 || cpuSignsAfter <= 0 {
			b.Skip("fanoutbench: no process CPU time on this platform")
		}
		perReq := used.Seconds() / float64(sc.Inboxes)
		perSign := 2 / (cpuSignsBefore + cpuSignsAfter)
		ratios = append(ratios, perReq/perSign)
		costs = append(costs, perReq*1e6)
	}
	b.StopTimer()
	b.ReportMetric(median(ratios), "floor_cpu_ratio")
	b.ReportMetric(median(costs), "floor_cpu_us")
}

// floorRequest returns the bytes of one delivery to hostport, signed as
// the Deliverer signs a first knock (draft-cavage), as net/http writes it.
func floorRequest(s *sig.Signer, hostport string) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, "http://"+hostport+"/users/u0/inbox", bytes.NewReader(fanoutActivity))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", deliver.ContentTypeDefault)
	if err := s.Sign(req, sig.SchemeCavage); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := req.Write(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// floorExchanges sends n requests over conns connections at once, host
// by host round the reqs, each connection writing its request and reading
// the answer n/conns times.
func floorExchanges(port int, reqs [][]byte, conns, n int) error {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	errs := make([]error, conns)
	var wg sync.WaitGroup
	for i := range conns {
		each := n / conns
		if i < n%conns {
			each++
		}
		wg.Go(func() { errs[i] = floorConn(addr, reqs[i%len(reqs)], each) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// floorConn does n exchanges of req on one connection.
func floorConn(addr string, req []byte, n int) error {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	br := bufio.NewReaderSize(c, 512)
	for range n {
		if _, err := c.Write(req); err != nil {
			return err
		}
		if err := readAnswer(br); err != nil {
			return err
		}
	}
	return nil
}

// readAnswer reads one answer of the simulation (its heads end in an
// empty line; a body, if any, has a Content-Length) and wants a 2xx.
func readAnswer(br *bufio.Reader) error {
	status, err := br.ReadSlice('\n')
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(status, []byte("HTTP/1.1 2")) {
		return fmt.Errorf("fanoutbench: answer %q", status)
	}
	length := 0
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		s := strings.TrimRight(string(line), "\r\n")
		if s == "" {
			_, err := io.CopyN(io.Discard, br, int64(length))
			return err
		}
		if k, v, ok := strings.Cut(s, ":"); ok && strings.EqualFold(k, "Content-Length") {
			if length, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
				return err
			}
		}
	}
}
