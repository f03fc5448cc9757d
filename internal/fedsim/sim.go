package fedsim

import (
	"bufio"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Loopback is the address range the simulation listens on, for a client's
// private-address allowance.
var Loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// Config configures a Sim. A nil *Config means the zero Config.
type Config struct {
	// Default is the profile of every host not given one with SetHost.
	// Defaults to the zero Profile: 202 at once.
	Default Profile
	// Record keeps every request, for Requests. Defaults to false: only
	// the per-host counts, which cost no memory per request.
	Record bool
	// Seed seeds the jitter and failure draws, so a run repeats. Defaults
	// to 0.
	Seed uint64
	// Now stamps recorded requests. Defaults to time.Now.
	Now func() time.Time
}

// Sim is the simulated fediverse: one loopback listener playing many hosts.
// Its methods are safe for concurrent use.
//
// It speaks HTTP/1.1 itself, reading request heads by hand (head.go),
// rather than through an http.Server: a benchmark's simulated servers
// share the cores with the Deliverer they measure, and the server's
// per-request machinery (a background read to notice a client going away,
// the response writer, a context per request, a header map) cost about a
// sixth of a fan-out's CPU. Here a connection's one goroutine reads the
// next request while an answer waits on its timer, so a client that gives
// up is seen by that read ending.
type Sim struct {
	cfg       Config
	ln        net.Listener
	port      int
	quit      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
	accepted  atomic.Int64

	mu    sync.Mutex
	rng   *rand.Rand
	hosts map[string]Profile
	stats map[string]*HostStats
	reqs  []Request
	conns map[net.Conn]struct{}
}

// HostStats counts what one host received and how it answered.
type HostStats struct {
	// Received counts requests whose headers arrived.
	Received int
	// Answered counts requests answered with a status, by status.
	Answered map[int]int
	// Hung counts requests a tarpit holds (counted as they arrive) and
	// requests to a slow host whose client gave up first; Refused counts
	// connections closed unanswered (counted before the close).
	Hung, Refused int
}

// Request is one request a host received, kept when Config.Record is set.
type Request struct {
	// Host is the host played (no port), Method and Path the request's.
	Host, Method, Path string
	// Scheme names the signature: "rfc9421" (a Signature-Input header),
	// "cavage" (a Signature header) or "" (unsigned).
	Scheme string
	// Body is the request body.
	Body []byte
	// Arrived is when its headers were read, Done when it was answered or
	// given up.
	Arrived, Done time.Time
	// Status is the answer, or 0 when none was given (hung, refused).
	Status int
}

// New starts a simulation listening on 127.0.0.1 at a free port.
func New(cfg *Config) (*Sim, error) {
	s := &Sim{quit: make(chan struct{}), hosts: map[string]Profile{}, stats: map[string]*HostStats{},
		conns: map[net.Conn]struct{}{}}
	if cfg != nil {
		s.cfg = *cfg
	}
	if s.cfg.Now == nil {
		s.cfg.Now = time.Now
	}
	s.rng = rand.New(rand.NewPCG(s.cfg.Seed, s.cfg.Seed^0x9e3779b97f4a7c15))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.ln = ln
	s.port = ln.Addr().(*net.TCPAddr).Port
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Close stops the listener and closes every connection; hung requests end.
// It returns once every connection's goroutine has.
func (s *Sim) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.quit)
		err = s.ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
	})
	s.wg.Wait()
	return err
}

// Connections counts the connections accepted so far: a client that keeps
// its connections alive opens few.
func (s *Sim) Connections() int { return int(s.accepted.Load()) }

// Port is the listener's port: every host is played on it.
func (s *Sim) Port() int { return s.port }

// URL returns http://host:port/path for a host the simulation plays.
func (s *Sim) URL(host, path string) string {
	return "http://" + host + ":" + strconv.Itoa(s.port) + path
}

// SetHost gives host (a name, without port) its profile.
func (s *Sim) SetHost(host string, p Profile) {
	s.mu.Lock()
	s.hosts[strings.ToLower(host)] = p
	s.mu.Unlock()
}

// Profile returns the profile host is played with.
func (s *Sim) Profile(host string) Profile {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.profile(strings.ToLower(host))
}

func (s *Sim) profile(host string) Profile {
	if p, ok := s.hosts[host]; ok {
		return p
	}
	return s.cfg.Default
}

// Stats returns what host received so far.
func (s *Sim) Stats(host string) HostStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats[strings.ToLower(host)]
	if st == nil {
		return HostStats{Answered: map[int]int{}}
	}
	out := *st
	out.Answered = make(map[int]int, len(st.Answered))
	for k, v := range st.Answered {
		out.Answered[k] = v
	}
	return out
}

// Requests returns the requests host received, in the order they were
// done with (answered, hung up or refused); empty
// unless Config.Record is set. An empty host returns every host's.
func (s *Sim) Requests(host string) []Request {
	host = strings.ToLower(host)
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.reqs {
		if host == "" || r.Host == host {
			out = append(out, r)
		}
	}
	return out
}

// Resolver returns a resolver, for client.Config.Resolver, that sends every
// name to 127.0.0.1.
func (s *Sim) Resolver() Resolver { return Resolver{} }

// Resolver sends every name to 127.0.0.1.
type Resolver struct{}

// LookupNetIP implements the client's resolver interface.
func (Resolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

func hostName(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	return strings.ToLower(h)
}

func (s *Sim) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.quit:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		s.mu.Lock()
		select {
		case <-s.quit:
			s.mu.Unlock()
			_ = c.Close()
			return
		default:
		}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.accepted.Add(1)
		s.wg.Add(1)
		go s.serveConn(c)
	}
}

// pending is an answer waiting on its timer.
type pending struct {
	timer *time.Timer
	// sent is closed once the answer is written or abandoned.
	sent chan struct{}
	// stop abandons the answer (the client went away) and reports whether
	// it was still unsent.
	stop func() bool
}

// serveConn serves one connection's requests in order: HTTP/1.1 without
// pipelined answers, as clients send them.
//
// Between requests it waits on the connection's first byte with no buffer:
// a buffer is taken from a pool for the request's headers and given back
// once they are read, so the thousands of idle keep-alive connections of a
// large fan-out cost a goroutine each, not 4 KiB of heap each on top of
// the Deliverer's they are there to measure.
func (s *Sim) serveConn(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		_ = c.Close()
	}()
	in := &firstByte{conn: c}
	var br *bufio.Reader // held over only while it has a pipelined request
	defer func() {
		if br != nil { // the connection ended with a request unread
			br.Reset(nil)
			readers.Put(br)
		}
	}()
	var wait *pending
	for {
		h, err := nextHead(in, &br)
		if wait != nil {
			if err != nil {
				// The client closed the connection (gave up) or Close did:
				// an answer still on its timer is never sent.
				wait.stop()
				return
			}
			<-wait.sent // a pipelined request waits for the answer before it
			wait = nil
		}
		if err != nil {
			return
		}
		var keep bool
		wait, keep = s.serve(c, h, br)
		heads.Put(h)
		if br.Buffered() == 0 {
			br.Reset(nil)
			readers.Put(br)
			br = nil
		}
		if !keep {
			if wait != nil {
				// Hold the connection until the answer is out.
				select {
				case <-wait.sent:
				case <-s.quit:
					wait.stop()
				}
			}
			return
		}
	}
}

var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}

// nextHead waits for the connection's next request, unless *br holds one
// already, and reads its head into a pooled head, taking a pooled reader
// into *br when it has none. The caller puts the head back after serving.
func nextHead(in *firstByte, br **bufio.Reader) (*head, error) {
	if *br == nil {
		if err := in.wait(); err != nil {
			return nil, err
		}
		*br = readers.Get().(*bufio.Reader)
		(*br).Reset(in)
	}
	h := heads.Get().(*head)
	if err := readHead(*br, h); err != nil {
		heads.Put(h)
		return nil, err
	}
	return h, nil
}

// firstByte reads a connection, handing out first the byte wait read.
type firstByte struct {
	conn net.Conn
	b    [1]byte
	has  bool
}

// wait blocks until the connection has a byte, or fails.
func (f *firstByte) wait() error {
	for {
		n, err := f.conn.Read(f.b[:])
		if n == 1 {
			f.has = true
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (f *firstByte) Read(p []byte) (int, error) {
	if f.has && len(p) > 0 {
		p[0], f.has = f.b[0], false
		return 1, nil
	}
	return f.conn.Read(p)
}

// serve handles one request read from c. It returns the answer waiting on
// its timer, if any, and whether to read the connection's next request.
func (s *Sim) serve(c net.Conn, h *head, br *bufio.Reader) (*pending, bool) {
	host := hostName(h.host)
	r := seen{method: h.method, scheme: h.scheme}
	if s.cfg.Record {
		r.path = h.path()
	}
	arrived := s.cfg.Now()
	s.mu.Lock()
	p := s.profile(host)
	st := s.stats[host]
	if st == nil {
		st = &HostStats{Answered: map[int]int{}}
		s.stats[host] = st
	}
	st.Received++
	delay := p.Latency
	if p.Jitter > 0 {
		delay += time.Duration(s.rng.Int64N(int64(2*p.Jitter)+1)) - p.Jitter
	}
	fail := p.FailP > 0 && s.rng.Float64() < p.FailP
	s.mu.Unlock()

	var body []byte
	var err error
	if s.cfg.Record || p.Check != nil {
		body, err = io.ReadAll(io.LimitReader(h.body(br), 1<<20))
	} else {
		_, err = io.Copy(io.Discard, h.body(br))
	}
	if err != nil {
		s.done(host, r, body, arrived, 0, func(st *HostStats) { st.Hung++ })
		return nil, false
	}
	switch p.Behaviour {
	case Refuse:
		// Counted before the close: the client sees the close at once and
		// may read Stats before this goroutine would run another line.
		s.done(host, r, body, arrived, 0, func(st *HostStats) { st.Refused++ })
		return nil, false
	case Hang:
		// Counted on arrival, for the same reason: the client gives up
		// before the server sees the connection go. The connection's next
		// read ends when the client or Close closes it.
		s.count(host, func(st *HostStats) { st.Hung++ })
		done := make(chan struct{})
		var once sync.Once
		return &pending{sent: done, stop: func() bool {
			once.Do(func() {
				s.done(host, r, body, arrived, 0, func(*HostStats) {})
				close(done)
			})
			return true
		}}, true
	}
	status := p.status()
	if fail {
		status = http.StatusInternalServerError
	}
	var extra http.Header
	if p.Check != nil && !fail {
		full, err := h.request(body)
		if err != nil {
			s.done(host, r, body, arrived, 0, func(st *HostStats) { st.Refused++ })
			return nil, false
		}
		if st, hdr := p.Check(full, body); st != 0 {
			status, extra = st, hdr
		}
	}
	keep := !h.close
	// Counted before the write, so that a client reading Stats once it has
	// the answer finds it there.
	answer := func() {
		s.done(host, r, body, arrived, status, func(st *HostStats) { st.Answered[status]++ })
		_, _ = c.Write(response(status, p.RetryAfter, extra, !keep))
	}
	if delay <= 0 {
		answer()
		return nil, keep
	}
	// The answer is written by its timer, while the connection's goroutine
	// goes back to reading: that read ending says the client went away.
	done := make(chan struct{})
	w := &pending{sent: done}
	w.timer = time.AfterFunc(delay, func() {
		answer()
		close(done)
	})
	w.stop = func() bool {
		if !w.timer.Stop() {
			<-done // answered already, or being answered
			return false
		}
		s.done(host, r, body, arrived, 0, func(st *HostStats) { st.Hung++ })
		close(done)
		return true
	}
	return w, keep
}

// response is the bytes of an answer with no body.
func response(status int, retryAfter time.Duration, extra http.Header, closing bool) []byte {
	b := make([]byte, 0, 128)
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(status)...)
	b = append(b, "\r\nContent-Length: 0\r\n"...)
	if retryAfter > 0 && (status < 200 || status >= 300) {
		b = append(b, "Retry-After: "...)
		b = strconv.AppendInt(b, int64((retryAfter+time.Second-1)/time.Second), 10)
		b = append(b, "\r\n"...)
	}
	for k, vs := range extra {
		for _, v := range vs {
			b = append(b, k...)
			b = append(b, ": "...)
			b = append(b, v...)
			b = append(b, "\r\n"...)
		}
	}
	if closing {
		b = append(b, "Connection: close\r\n"...)
	}
	return append(b, "\r\n"...)
}

// count updates host's stats under the lock.
func (s *Sim) count(host string, f func(*HostStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s.stats[host])
}

// seen is what a recorded Request keeps of a request's head, which goes
// back to its pool before a delayed answer is recorded.
type seen struct{ method, path, scheme string }

func (s *Sim) done(host string, r seen, body []byte, arrived time.Time, status int, count func(*HostStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	count(s.stats[host])
	if s.cfg.Record {
		s.reqs = append(s.reqs, Request{Host: host, Method: r.method, Path: r.path, Scheme: r.scheme,
			Body: body, Arrived: arrived, Done: s.cfg.Now(), Status: status})
	}
}
