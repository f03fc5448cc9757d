package fedsim_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/internal/fedsim"
)

func newSim(t *testing.T, cfg *fedsim.Config) *fedsim.Sim {
	t.Helper()
	s, err := fedsim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newClient(t *testing.T, s *fedsim.Sim, timeout time.Duration) *client.Client {
	t.Helper()
	c, err := client.New(&client.Config{AllowPrivate: fedsim.Loopback, Resolver: s.Resolver(),
		Timeout: timeout, ResponseHeaderTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func post(t *testing.T, c *client.Client, url string, header http.Header) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(`{"type":"Create"}`))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	return resp, err
}

// eventually polls cond until it holds or a generous bound passes: what
// the server records after the client has given up lands a moment later.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition never held")
}

func TestProfilesByHostHeader(t *testing.T) {
	t.Parallel()
	s := newSim(t, &fedsim.Config{Record: true})
	s.SetHost("gone.example", fedsim.Gone(0))
	s.SetHost("busy.example", fedsim.RateLimited(0, 3*time.Second))
	s.SetHost("sick.example", fedsim.Flaky(0, 0, 1))
	c := newClient(t, s, 5*time.Second)
	cases := []struct {
		host       string
		status     int
		retryAfter string
	}{
		{"ok.example", 202, ""},
		{"gone.example", 410, ""},
		{"busy.example", 429, "3"},
		{"sick.example", 500, ""},
	}
	for _, tc := range cases {
		resp, err := post(t, c, s.URL(tc.host, "/inbox"), http.Header{"Signature": {`keyId="k"`}})
		if err != nil {
			t.Fatalf("%s: %v", tc.host, err)
		}
		if resp.StatusCode != tc.status || resp.Header.Get("Retry-After") != tc.retryAfter {
			t.Errorf("%s answered %d, Retry-After %q; want %d, %q", tc.host, resp.StatusCode, resp.Header.Get("Retry-After"), tc.status, tc.retryAfter)
		}
		st := s.Stats(tc.host)
		if st.Received != 1 || st.Answered[tc.status] != 1 {
			t.Errorf("%s stats %+v", tc.host, st)
		}
		reqs := s.Requests(tc.host)
		if len(reqs) != 1 || reqs[0].Path != "/inbox" || reqs[0].Scheme != "cavage" || reqs[0].Status != tc.status ||
			string(reqs[0].Body) != `{"type":"Create"}` {
			t.Errorf("%s recorded %+v", tc.host, reqs)
		}
	}
	if n := len(s.Requests("")); n != len(cases) {
		t.Errorf("%d requests recorded in all, want %d", n, len(cases))
	}
}

func TestHealthyWaitsItsLatency(t *testing.T) {
	t.Parallel()
	s := newSim(t, &fedsim.Config{Record: true, Default: fedsim.Healthy(50*time.Millisecond, 10*time.Millisecond)})
	c := newClient(t, s, 5*time.Second)
	for range 5 {
		if resp, err := post(t, c, s.URL("a.example", "/inbox"), http.Header{"Signature-Input": {"sig1=()"}}); err != nil || resp.StatusCode != 202 {
			t.Fatalf("%v, %v", resp, err)
		}
	}
	for _, r := range s.Requests("a.example") {
		// A timer never fires early: the lower bound is not a timing race.
		if took := r.Done.Sub(r.Arrived); took < 40*time.Millisecond || r.Scheme != "rfc9421" {
			t.Errorf("answered after %v under %q, want at least latency - jitter, rfc9421", took, r.Scheme)
		}
	}
}

func TestTarpitNeverAnswers(t *testing.T) {
	t.Parallel()
	s := newSim(t, nil)
	s.SetHost("tarpit.example", fedsim.Tarpit())
	c := newClient(t, s, 200*time.Millisecond)
	_, err := post(t, c, s.URL("tarpit.example", "/inbox"), nil)
	if !errors.Is(err, client.ErrTimeout) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	eventually(t, func() bool { return s.Stats("tarpit.example").Hung == 1 })
	if st := s.Stats("tarpit.example"); st.Received != 1 || len(st.Answered) != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestSlowAnswersLate(t *testing.T) {
	t.Parallel()
	s := newSim(t, nil)
	s.SetHost("slow.example", fedsim.Slow(time.Hour))
	c := newClient(t, s, 200*time.Millisecond)
	if _, err := post(t, c, s.URL("slow.example", "/inbox"), nil); !errors.Is(err, client.ErrTimeout) {
		t.Fatalf("err = %v, want a timeout before an hour", err)
	}
}

func TestRefusingClosesTheConnection(t *testing.T) {
	t.Parallel()
	s := newSim(t, nil)
	s.SetHost("refusing.example", fedsim.Refusing())
	c := newClient(t, s, 5*time.Second)
	if _, err := post(t, c, s.URL("refusing.example", "/inbox"), nil); err == nil {
		t.Fatal("a refusing host answered")
	}
	if st := s.Stats("refusing.example"); st.Refused == 0 || len(st.Answered) != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestFlakyFailsAboutP(t *testing.T) {
	t.Parallel()
	s := newSim(t, &fedsim.Config{Seed: 7, Default: fedsim.Flaky(0, 0, 0.5)})
	c := newClient(t, s, 5*time.Second)
	const n = 200
	for range n {
		if _, err := post(t, c, s.URL("f.example", "/inbox"), nil); err != nil {
			t.Fatal(err)
		}
	}
	st := s.Stats("f.example")
	// Binomial(200, 0.5): outside 60..140 is beyond 5 standard deviations.
	if f := st.Answered[500]; f < 60 || f > 140 || f+st.Answered[202] != n {
		t.Fatalf("answers %v, want about half 500", st.Answered)
	}
}

func TestProfileHealthy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    fedsim.Profile
		want bool
	}{
		{fedsim.Healthy(time.Millisecond, 0), true},
		{fedsim.Slow(time.Second), true},
		{fedsim.Tarpit(), false},
		{fedsim.Flaky(0, 0, 0.01), false},
		{fedsim.Refusing(), false},
		{fedsim.RateLimited(0, time.Second), false},
		{fedsim.Gone(0), false},
	} {
		if got := tc.p.Healthy(); got != tc.want {
			t.Errorf("%+v.Healthy() = %v", tc.p, got)
		}
	}
}

func TestCloseEndsHungRequests(t *testing.T) {
	t.Parallel()
	s, err := fedsim.New(&fedsim.Config{Default: fedsim.Tarpit()})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, s, time.Minute)
	done := make(chan error, 1)
	go func() { _, err := post(t, c, s.URL("t.example", "/inbox"), nil); done <- err }()
	eventually(t, func() bool { return s.Stats("t.example").Received == 1 })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatal("a hung request answered after Close")
	}
}

func TestKeepAliveReusesOneConnection(t *testing.T) {
	t.Parallel()
	s := newSim(t, nil)
	c := newClient(t, s, 5*time.Second)
	for range 5 {
		if _, err := post(t, c, s.URL("a.example", "/inbox"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Connections(); n != 1 {
		t.Fatalf("%d connections for 5 requests in a row, want 1", n)
	}
}

// TestPipelinedRequestsAnsweredInOrder: two requests written at once on one
// connection get their answers in order, the second after the first.
func TestPipelinedRequestsAnsweredInOrder(t *testing.T) {
	t.Parallel()
	s := newSim(t, nil)
	s.SetHost("slow.example", fedsim.Slow(50*time.Millisecond))
	s.SetHost("gone.example", fedsim.Gone(0))
	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.Port()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := func(host string) string {
		return "POST /inbox HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: 2\r\n\r\n{}"
	}
	if _, err := io.WriteString(conn, req("slow.example")+req("gone.example")); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	for _, want := range []int{http.StatusAccepted, http.StatusGone} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("status %d, want %d", resp.StatusCode, want)
		}
	}
}

// TestSlowHostSeesTheClientGiveUp: a client that times out before a slow
// host answers is counted Hung, and nothing is answered.
func TestSlowHostSeesTheClientGiveUp(t *testing.T) {
	t.Parallel()
	s := newSim(t, &fedsim.Config{Record: true})
	s.SetHost("slow.example", fedsim.Slow(time.Hour))
	c := newClient(t, s, 100*time.Millisecond)
	if _, err := post(t, c, s.URL("slow.example", "/inbox"), nil); err == nil {
		t.Fatal("a slow host answered within the timeout")
	}
	eventually(t, func() bool { return s.Stats("slow.example").Hung == 1 })
	if st := s.Stats("slow.example"); len(st.Answered) != 0 {
		t.Fatalf("stats %+v", st)
	}
	if r := s.Requests("slow.example"); len(r) != 1 || r[0].Status != 0 || r[0].Done.Before(r[0].Arrived) {
		t.Fatalf("recorded %+v", r)
	}
}
