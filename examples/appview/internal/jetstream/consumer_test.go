package jetstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func identityFrame(did string, timeUS, seq int64) []byte {
	return fmt.Appendf(nil, `{"did":%q,"time_us":%d,"kind":"identity","identity":{"did":%q,"seq":%d,"time":"2026-11-29T12:00:00.000Z"}}`, did, timeUS, did, seq)
}

type recorder struct {
	mu    sync.Mutex
	seen  map[int64]int
	byDID map[string][]int64
	order []int64
}

func newRecorder() *recorder {
	return &recorder{seen: map[int64]int{}, byDID: map[string][]int64{}}
}

func (r *recorder) handle(_ context.Context, f Frame) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[f.TimeUS]++
	r.byDID[f.DID] = append(r.byDID[f.DID], f.TimeUS)
	r.order = append(r.order, f.TimeUS)
	return nil
}

// holdAt returns a handler that records events, holding the one at timeUS
// until release is closed.
func (r *recorder) holdAt(timeUS int64, release <-chan struct{}) Handler {
	return func(ctx context.Context, f Frame) error {
		if f.TimeUS == timeUS {
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return r.handle(ctx, f)
	}
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.order)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type bundle struct {
	fake    *FakeServer
	url     string
	cursors *MemoryCursors
}

func setup(t *testing.T) bundle {
	t.Helper()
	fake := NewFakeServer()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return bundle{fake: fake, url: "ws" + strings.TrimPrefix(srv.URL, "http") + "/subscribe", cursors: &MemoryCursors{}}
}

func start(t *testing.T, b bundle, h Handler) (*Consumer, func()) {
	t.Helper()
	c, err := New(b.cursors, h, &Config{URL: b.url, Lanes: 4, BackoffMin: time.Millisecond, BackoffMax: 5 * time.Millisecond, FlushInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	return c, func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v", err)
		}
	}
}

func TestDisconnectResumesAtCursor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	dids := []string{"did:plc:aaaa", "did:plc:bbbb", "did:plc:cccc"}
	var want []int64
	for i := range 12 {
		ts := int64(1_000_000 + i)
		b.fake.Append(identityFrame(dids[i%3], ts, int64(i+1)))
		want = append(want, ts)
	}
	// First connection dies after 5 frames, mid-stream.
	b.fake.DropAfter(5)
	rec := newRecorder()
	c, stop := start(t, b, rec.handle)
	waitFor(t, "12 events", func() bool { return rec.count() == 12 })
	waitFor(t, "cursor", func() bool { return c.Cursor() == want[11] })
	stop()

	for _, ts := range want {
		if n := rec.seen[ts]; n != 1 {
			t.Errorf("event %d handled %d times, want 1", ts, n)
		}
	}
	dials := b.fake.Dials()
	if len(dials) < 2 || dials[0] != 0 || dials[1] != want[4] {
		t.Fatalf("dial cursors = %v, want [0 %d ...]", dials, want[4])
	}
	for did, ts := range rec.byDID {
		for i := 1; i < len(ts); i++ {
			if ts[i] <= ts[i-1] {
				t.Errorf("%s handled out of order: %v", did, ts)
			}
		}
	}
	if v, _, _ := b.cursors.LoadCursor(context.Background(), CursorNameDefault); v != want[11] {
		t.Fatalf("stored cursor = %d, want %d", v, want[11])
	}

	// A restart resumes from the stored cursor and repeats nothing.
	b.fake.Append(identityFrame(dids[0], 2_000_000, 99))
	rec2 := newRecorder()
	_, stop2 := start(t, b, rec2.handle)
	waitFor(t, "new event", func() bool { return rec2.count() == 1 })
	stop2()
	if rec2.order[0] != 2_000_000 {
		t.Fatalf("after restart handled %v, want only the new event", rec2.order)
	}
	if d := b.fake.Dials(); d[len(d)-1] != want[11] {
		t.Fatalf("restart dialled with cursor %d, want %d", d[len(d)-1], want[11])
	}
}

func TestCursorHoldsBeforeUnfinishedEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	release := make(chan struct{})
	rec := newRecorder()
	h := rec.holdAt(10, release)
	// Event 10 blocks on its lane; later events for other DIDs finish.
	b.fake.Append(identityFrame("did:plc:slow", 10, 1))
	for i := range 20 {
		b.fake.Append(identityFrame(fmt.Sprintf("did:plc:other%d", i), int64(11+i), 1))
	}
	c, stop := start(t, b, h)
	defer stop()
	waitFor(t, "others", func() bool { return rec.count() >= 10 })
	if got := c.Cursor(); got >= 10 {
		t.Fatalf("cursor %d passed the unfinished event 10", got)
	}
	close(release)
	waitFor(t, "all", func() bool { return c.Cursor() == 30 })
}

// TestOneDIDIsHandledInOrder holds a DID's first event: its later events
// wait behind it on its lane, while another DID's event (on another lane)
// is handled. Then all of them run, in arrival order.
func TestOneDIDIsHandledInOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const did = "did:plc:one"
	release := make(chan struct{})
	rec := newRecorder()
	h := rec.holdAt(1, release)
	for i := range 20 {
		b.fake.Append(identityFrame(did, int64(1+i), int64(1+i)))
	}
	c, stop := start(t, b, h)
	defer stop()
	other := ""
	for i := 0; other == ""; i++ {
		if d := fmt.Sprintf("did:plc:other%d", i); c.lane(d) != c.lane(did) {
			other = d
		}
	}
	// Appended last: once it is handled, the stream was read past every
	// event of did.
	b.fake.Append(identityFrame(other, 100, 1))
	waitFor(t, "the other DID", func() bool { return rec.count() >= 1 })
	rec.mu.Lock()
	early := append([]int64(nil), rec.byDID[did]...)
	rec.mu.Unlock()
	if len(early) != 0 {
		t.Fatalf("events %v of %s ran while its first event was held", early, did)
	}
	close(release)
	waitFor(t, "all events", func() bool { return rec.count() == 21 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i, ts := range rec.byDID[did] {
		if ts != int64(1+i) {
			t.Fatalf("%s handled in order %v, want 1..20", did, rec.byDID[did])
		}
	}
}

// TestEventsSharingATimeUS: Jetstream stamps time_us from its clock, so
// two events can share one. Neither is lost, in one session or across a
// reconnect whose replay (inclusive of the cursor) repeats the first.
func TestEventsSharingATimeUS(t *testing.T) {
	t.Parallel()
	for _, drop := range []int{-1, 1} {
		t.Run(fmt.Sprintf("drop after %d", drop), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.fake.Append(identityFrame("did:plc:aaaa", 5, 1), identityFrame("did:plc:bbbb", 5, 1), identityFrame("did:plc:cccc", 6, 1))
			if drop >= 0 {
				b.fake.DropAfter(drop)
			}
			rec := newRecorder()
			c, stop := start(t, b, rec.handle)
			waitFor(t, "cursor", func() bool { return c.Cursor() == 6 })
			stop()
			want := map[string][]int64{"did:plc:aaaa": {5}, "did:plc:bbbb": {5}, "did:plc:cccc": {6}}
			for did, ts := range want {
				if got := rec.byDID[did]; !slices.Equal(got, ts) {
					t.Errorf("%s handled at %v, want %v", did, got, ts)
				}
			}
		})
	}
}

// TestTrackerStopsShortOfASharedTimeUS: the cursor means every event at
// or before it is handled, so a finished event does not carry it to a
// time_us an unfinished one shares (a restart skips the cursor's events).
func TestTrackerStopsShortOfASharedTimeUS(t *testing.T) {
	t.Parallel()
	var tr tracker
	tr.init(3)
	a, b, c := tr.add(5), tr.add(5), tr.add(6)
	tr.finish(a)
	tr.finish(c)
	if got := tr.mark(); got != 3 {
		t.Fatalf("mark = %d with an event at 5 unfinished, want 3", got)
	}
	tr.finish(b)
	if got := tr.mark(); got != 6 {
		t.Fatalf("mark = %d with everything finished, want 6", got)
	}
}

// TestReconnectsAfterFailedDials: a Jetstream that refuses the upgrade is
// redialled with backoff until it accepts; the event is then handled once.
func TestReconnectsAfterFailedDials(t *testing.T) {
	t.Parallel()
	fake := NewFakeServer()
	fake.Append(identityFrame("did:plc:aaaa", 5, 1))
	var mu sync.Mutex
	refused := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		refuse := refused < 3
		if refuse {
			refused++
		}
		mu.Unlock()
		if refuse {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	b := bundle{fake: fake, url: "ws" + strings.TrimPrefix(srv.URL, "http") + "/subscribe", cursors: &MemoryCursors{}}
	rec := newRecorder()
	c, stop := start(t, b, rec.handle)
	defer stop()
	waitFor(t, "the event", func() bool { return c.Cursor() == 5 })
	mu.Lock()
	defer mu.Unlock()
	if refused != 3 || rec.count() != 1 {
		t.Fatalf("refused %d dials, handled %d events", refused, rec.count())
	}
}

func TestJitter(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{0, 1, 2, time.Millisecond, 30 * time.Second} {
		for range 100 {
			if j := jitter(d); d > 1 && (j < d/2 || j >= d) || d <= 1 && j != d {
				t.Fatalf("jitter(%s) = %s, want [%s, %s)", d, j, d/2, d)
			}
		}
	}
}

func TestHandlerErrorIsRetried(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var mu sync.Mutex
	calls := 0
	rec := newRecorder()
	h := func(ctx context.Context, f Frame) error {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n <= 2 {
			return errors.New("database down")
		}
		return rec.handle(ctx, f)
	}
	b.fake.Append(identityFrame("did:plc:aaaa", 5, 1))
	c, stop := start(t, b, h)
	defer stop()
	waitFor(t, "retry", func() bool { return c.Cursor() == 5 })
	if rec.count() != 1 {
		t.Fatalf("handled %d times", rec.count())
	}
}

func TestMalformedFrameAdvancesCursor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rec := newRecorder()
	b.fake.Append([]byte(`{"did":"did:plc:aaaa","time_us":7,"kind":"identity"}`), identityFrame("did:plc:aaaa", 8, 1))
	c, stop := start(t, b, rec.handle)
	defer stop()
	waitFor(t, "cursor", func() bool { return c.Cursor() == 8 })
	if rec.count() != 1 || rec.order[0] != 8 {
		t.Fatalf("handled %v, want only 8", rec.order)
	}
}

func TestDoRunsOnTheDIDLane(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rec := newRecorder()
	c, stop := start(t, b, rec.handle)
	defer stop()
	waitFor(t, "running", func() bool { return len(b.fake.Dials()) > 0 })
	ran := false
	if err := c.Do(context.Background(), "did:plc:aaaa", func(context.Context) { ran = true }); err != nil || !ran {
		t.Fatalf("Do = %v, ran = %v", err, ran)
	}
}

func TestNewRefusesBadURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "http://x/subscribe", "ws://"} {
		if _, err := New(&MemoryCursors{}, func(context.Context, Frame) error { return nil }, &Config{URL: u}); err == nil {
			t.Errorf("New(%q) succeeded", u)
		}
	}
}
