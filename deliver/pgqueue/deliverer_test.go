package pgqueue_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/pgqueue"
	"github.com/fedkit/fedkit/internal/pgtest"
)

const keyID = "https://a.example/users/alice#main-key"

type staticKeys struct{}

var testKey = ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))

func (staticKeys) Key(context.Context, string) (crypto.Signer, error) { return testKey, nil }
func (staticKeys) Gone(context.Context, string) (bool, error)         { return false, nil }

// loopback sends every host name to 127.0.0.1, so one listener stands for
// many hosts.
type loopback struct{}

func (loopback) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

func testClient(t testing.TB) *client.Client {
	t.Helper()
	c, err := client.New(&client.Config{
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Resolver:     loopback{},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// inboxServer records, per inbox path, the activities it received in order.
type inboxServer struct {
	*httptest.Server
	mu    sync.Mutex
	got   map[string][]string
	total atomic.Int64
	delay time.Duration
}

func newInboxServer(t testing.TB, delay time.Duration) *inboxServer {
	s := &inboxServer{got: map[string][]string{}, delay: delay}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if s.delay > 0 {
			time.Sleep(s.delay)
		}
		s.mu.Lock()
		s.got[r.Host+r.URL.Path] = append(s.got[r.Host+r.URL.Path], string(b))
		s.mu.Unlock()
		s.total.Add(1)
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *inboxServer) port() int { return s.Listener.Addr().(*net.TCPAddr).Port }

func (s *inboxServer) inboxes(n, hosts int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("http://h%d.example:%d/users/u%d/inbox", i%hosts, s.port(), i)
	}
	return out
}

func activityJSON(id string) []byte {
	return []byte(`{"id":"https://a.example/activities/` + id + `","type":"Create","actor":"https://a.example/users/alice"}`)
}

func waitDone(t testing.TB, q driver.Queue, tags []string, limit time.Duration) {
	t.Helper()
	stop := time.Now().Add(limit)
	for _, tag := range tags {
		for {
			s, err := q.Status(context.Background(), tag)
			if err != nil {
				t.Fatal(err)
			}
			if s.Done() {
				break
			}
			if time.Now().After(stop) {
				t.Fatalf("batch %s not done: %+v", tag, s)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// Two Deliverers on separate pools work one queue: every inbox gets every
// activity, in the order of its ordering key, and both did a share.
func TestTwoDeliverersOneQueue(t *testing.T) {
	cs := pgtest.ConnString(t)
	srv := newInboxServer(t, time.Millisecond)
	inboxes := srv.inboxes(200, 20)
	c := testClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	var runs sync.WaitGroup
	var worked [2]atomic.Int64
	var ds [2]*deliver.Deliverer
	for i := range ds {
		q := openQueue(t, cs, nil)
		d, err := deliver.New(q, staticKeys{}, c, &deliver.Config{
			Concurrency: 8, PerHost: 4, PollInterval: 10 * time.Millisecond,
			OnAttempt: func(context.Context, deliver.Attempt) { worked[i].Add(1) },
		})
		if err != nil {
			t.Fatal(err)
		}
		ds[i] = d
		runs.Go(func() {
			if err := d.Run(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	tags := []string{"create", "update", "delete"}
	for i, tag := range tags {
		// Alternate the sender, so both enqueue.
		err := ds[i%2].SendBatch(context.Background(), keyID, activityJSON(tag), inboxes,
			deliver.Batch{Tag: tag, OrderingKey: "https://a.example/notes/1"})
		if err != nil {
			t.Fatal(err)
		}
	}
	waitDone(t, openQueue(t, cs, nil), tags, 60*time.Second)
	cancel()
	runs.Wait()

	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.got) != len(inboxes) {
		t.Fatalf("%d inboxes reached, want %d", len(srv.got), len(inboxes))
	}
	for inbox, acts := range srv.got {
		if len(acts) != 3 {
			t.Fatalf("%s got %d activities, want 3", inbox, len(acts))
		}
		for i, tag := range tags {
			if !strings.Contains(acts[i], "/activities/"+tag) {
				t.Fatalf("%s got them out of order: %v", inbox, acts)
			}
		}
	}
	if worked[0].Load() == 0 || worked[1].Load() == 0 {
		t.Fatalf("attempts per deliverer %d and %d: want both to share the work", worked[0].Load(), worked[1].Load())
	}
}

const (
	crashEnv      = "FEDKIT_PGQUEUE_CRASH_CHILD"
	crashInboxes  = 5000
	crashConc     = 16
	crashKillFrom = 1000 // deliveries seen before the kill
	// crashLease is longer than any delivery can take on a loaded machine,
	// so no worker ever reclaims a job it still holds; the fresh worker
	// does not wait it out but runs on a clock crashLease ahead.
	crashLease = time.Minute
	// crashBudget bounds the whole test, and the child's life should the
	// test die without killing it.
	crashBudget = 2 * time.Minute
)

// TestCrashChild is the worker the crash test starts and kills; it does
// nothing in a normal run.
func TestCrashChild(t *testing.T) {
	cs := os.Getenv(crashEnv)
	if cs == "" {
		t.Skip("run by TestCrashRecovery")
	}
	d, err := deliver.New(openQueue(t, cs, nil), staticKeys{}, testClient(t), &deliver.Config{
		Concurrency: crashConc, PerHost: 4, Lease: crashLease, PollInterval: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), crashBudget)
	defer cancel()
	_ = d.Run(ctx) // until killed
}

// A worker killed with SIGKILL mid-send loses nothing: a fresh worker
// finishes once the dead one's leases lapse, every inbox receives the
// activity, and the only duplicates are deliveries the dead worker had
// claimed and not settled at the kill.
func TestCrashRecovery(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		t.Skip("in the child")
	}
	stop := time.Now().Add(crashBudget)
	cs := pgtest.ConnString(t)
	srv := newInboxServer(t, 2*time.Millisecond)
	inboxes := srv.inboxes(crashInboxes, 100)
	pool := openPool(t, cs, nil)
	q := migrated(t, pool, nil)
	err := q.Enqueue(context.Background(), &driver.Envelope{KeyID: keyID, ActivityID: "https://a.example/activities/crash",
		Body: activityJSON("crash"), Inboxes: inboxes, EnqueuedAt: time.Now(), Tag: "crash"})
	if err != nil {
		t.Fatal(err)
	}

	began := time.Now()
	child := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	child.Env = append(os.Environ(), crashEnv+"="+cs)
	child.Stdout, child.Stderr = os.Stderr, os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = child.Wait(); close(exited) }()
	// Whatever fails below, the child does not outlive the test.
	t.Cleanup(func() { _ = child.Process.Kill(); <-exited })
	for srv.total.Load() < crashKillFrom {
		select {
		case <-exited:
			t.Fatalf("the child exited after %d deliveries", srv.total.Load())
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(stop) {
			t.Fatalf("the child delivered only %d in %v", srv.total.Load(), crashBudget)
		}
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	atKill := srv.total.Load()
	t.Logf("killed after %v", time.Since(began))
	if atKill >= crashInboxes {
		t.Fatalf("the child finished before the kill (%d delivered); nothing was tested", atKill)
	}
	// Jobs the child claimed and never settled keep their lease (no
	// delivery here is retried, which would clear it): the deliveries in
	// flight at the kill, and the only ones that may arrive twice.
	inFlight := count(t, pool, "SELECT count(*) FROM fedkit_delivery_jobs WHERE lease_until IS NOT NULL")

	// A clock crashLease ahead finds every lease of the dead worker lapsed,
	// as the real one would a minute from now.
	began = time.Now()
	d, err := deliver.New(q, staticKeys{}, testClient(t), &deliver.Config{
		Concurrency: crashConc, PerHost: 4, Lease: crashLease, PollInterval: 20 * time.Millisecond,
		Now: func() time.Time { return time.Now().Add(crashLease) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error)
	go func() { ran <- d.Run(ctx) }()
	waitDone(t, q, []string{"crash"}, time.Until(stop))
	t.Logf("fresh worker done after %v", time.Since(began))
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}

	srv.mu.Lock()
	defer srv.mu.Unlock()
	dups := 0
	for _, in := range inboxes {
		u := strings.TrimPrefix(in, "http://")
		n := len(srv.got[u])
		if n == 0 {
			t.Fatalf("%s never received the activity", in)
		}
		dups += n - 1
	}
	t.Logf("delivered %d before SIGKILL, %d claimed and unsettled at the kill, %d duplicates", atKill, inFlight, dups)
	if int64(dups) > inFlight {
		t.Fatalf("%d duplicates, more than the %d in flight at the kill", dups, inFlight)
	}
	if s, _ := q.Status(context.Background(), "crash"); s.Delivered != crashInboxes {
		t.Fatalf("status %+v, want %d delivered", s, crashInboxes)
	}
}

// A Deliverer polling once an hour still delivers at once what another
// process enqueues: pgqueue's Notify wakes it.
func TestDelivererWakesOnNotify(t *testing.T) {
	cs := pgtest.ConnString(t)
	srv := newInboxServer(t, 0)
	c := testClient(t)
	// Both the deliverer's poll and the queue's fallback poll are an hour
	// away, so only a notification can wake the worker.
	worker, err := deliver.New(openQueue(t, cs, &pgqueue.Config{PollInterval: time.Hour}), staticKeys{}, c,
		&deliver.Config{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	sender, err := deliver.New(openQueue(t, cs, nil), staticKeys{}, c, &deliver.Config{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error)
	go func() { ran <- worker.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-ran; err != nil {
			t.Error(err)
		}
	}()
	for i := range 2 {
		// The second send finds the worker idle, waiting on its hour.
		if err := sender.Send(context.Background(), keyID, activityJSON(fmt.Sprint("wake", i)), srv.inboxes(1, 1)); err != nil {
			t.Fatal(err)
		}
		stop := time.Now().Add(20 * time.Second)
		for srv.total.Load() < int64(i+1) {
			if time.Now().After(stop) {
				t.Fatalf("send %d not delivered: no wake-up", i)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
