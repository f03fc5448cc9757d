package fedsim

import (
	"context"
	"errors"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
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
type Sim struct {
	cfg       Config
	ln        net.Listener
	srv       *http.Server
	port      int
	quit      chan struct{}
	closeOnce sync.Once

	mu    sync.Mutex
	rng   *rand.Rand
	hosts map[string]Profile
	stats map[string]*HostStats
	reqs  []Request
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
	s := &Sim{quit: make(chan struct{}), hosts: map[string]Profile{}, stats: map[string]*HostStats{}}
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
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serve),
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the listener and closes every connection; hung requests end.
func (s *Sim) Close() error {
	// Connections first: a hung handler then returns with nothing written.
	err := s.srv.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	s.closeOnce.Do(func() { close(s.quit) })
	return err
}

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

func scheme(r *http.Request) string {
	switch {
	case r.Header.Get("Signature-Input") != "":
		return "rfc9421"
	case r.Header.Get("Signature") != "":
		return "cavage"
	}
	return ""
}

func (s *Sim) serve(w http.ResponseWriter, r *http.Request) {
	host := hostName(r.Host)
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
	if s.cfg.Record || p.Check != nil {
		body, _ = io.ReadAll(io.LimitReader(r.Body, 1<<20))
	} else {
		_, _ = io.Copy(io.Discard, r.Body)
	}
	status := 0
	switch p.Behaviour {
	case Refuse:
		// Counted before the close: the client sees the close at once and
		// may read Stats before this handler would run another line.
		s.done(host, r, body, arrived, 0, func(st *HostStats) { st.Refused++ })
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
			}
		}
		return
	case Hang:
		// Counted on arrival, for the same reason: the client gives up
		// before the server sees the connection go.
		s.count(host, func(st *HostStats) { st.Hung++ })
		select {
		case <-r.Context().Done():
		case <-s.quit:
		}
		s.done(host, r, body, arrived, 0, func(*HostStats) {})
		return
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			s.done(host, r, body, arrived, 0, func(st *HostStats) { st.Hung++ })
			return
		case <-s.quit:
			t.Stop()
			return
		}
	}
	status = p.status()
	if fail {
		status = http.StatusInternalServerError
	}
	if p.Check != nil && !fail {
		if st, h := p.Check(r, body); st != 0 {
			status = st
			for k, vs := range h {
				w.Header()[k] = vs
			}
		}
	}
	if p.RetryAfter > 0 && (status < 200 || status >= 300) {
		w.Header().Set("Retry-After", strconv.Itoa(int((p.RetryAfter+time.Second-1)/time.Second)))
	}
	w.WriteHeader(status)
	s.done(host, r, body, arrived, status, func(st *HostStats) { st.Answered[status]++ })
}

// count updates host's stats under the lock.
func (s *Sim) count(host string, f func(*HostStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s.stats[host])
}

func (s *Sim) done(host string, r *http.Request, body []byte, arrived time.Time, status int, count func(*HostStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	count(s.stats[host])
	if s.cfg.Record {
		s.reqs = append(s.reqs, Request{Host: host, Method: r.Method, Path: r.URL.Path, Scheme: scheme(r),
			Body: body, Arrived: arrived, Done: s.cfg.Now(), Status: status})
	}
}
