package jetstream

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/coder/websocket"
)

// FakeServer is an in-process Jetstream /subscribe endpoint for tests: it
// replays its frames from the dial's cursor (inclusive, so the client's
// de-duplication is exercised), can drop a connection after N frames, and
// otherwise keeps the connection open, as Jetstream does. It records each
// dial's cursor. It lives in a non-test file so other packages' tests can
// use it; it is internal to the example.
type FakeServer struct {
	mu     sync.Mutex
	frames [][]byte
	times  []int64
	dials  []int64 // cursor of each dial; 0 when absent
	drops  []int   // drops[i]: close dial i after this many frames (-1: keep open)
	more   chan struct{}
}

// NewFakeServer returns an empty server.
func NewFakeServer() *FakeServer { return &FakeServer{more: make(chan struct{})} }

// Append adds frames; open connections receive them.
func (s *FakeServer) Append(frames ...[]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range frames {
		var env struct {
			TimeUS int64 `json:"time_us"`
		}
		if err := json.Unmarshal(f, &env); err != nil {
			panic(fmt.Sprintf("jetstream: FakeServer.Append: %v", err))
		}
		s.frames = append(s.frames, f)
		s.times = append(s.times, env.TimeUS)
	}
	close(s.more)
	s.more = make(chan struct{})
}

// DropAfter makes the next dials close after n frames each, in order.
func (s *FakeServer) DropAfter(n ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drops = append(s.drops, n...)
}

// Dials returns the cursor of each dial so far (0: none given).
func (s *FakeServer) Dials() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.dials...)
}

func (s *FakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cursor, _ := strconv.ParseInt(r.URL.Query().Get("cursor"), 10, 64)
	s.mu.Lock()
	s.dials = append(s.dials, cursor)
	drop := -1
	if len(s.drops) > 0 {
		drop, s.drops = s.drops[0], s.drops[1:]
	}
	s.mu.Unlock()
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	// CloseRead ends ctx when the client goes away: a hijacked
	// connection's request context would not.
	ctx := c.CloseRead(r.Context())
	sent, next := 0, 0
	for {
		s.mu.Lock()
		more := s.more
		var batch [][]byte
		for ; next < len(s.frames); next++ {
			if cursor == 0 || s.times[next] >= cursor {
				batch = append(batch, s.frames[next])
			}
		}
		s.mu.Unlock()
		for _, f := range batch {
			if drop >= 0 && sent == drop {
				return // an abrupt close, mid-stream
			}
			if err := c.Write(ctx, websocket.MessageText, f); err != nil {
				return
			}
			sent++
		}
		if drop >= 0 && sent == drop {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-more:
		}
	}
}

// MemoryCursors is a CursorStore in memory, for tests.
type MemoryCursors struct {
	mu sync.Mutex
	m  map[string]int64
}

// LoadCursor implements CursorStore.
func (m *MemoryCursors) LoadCursor(_ context.Context, name string) (int64, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[name]
	return v, ok, nil
}

// SaveCursor implements CursorStore.
func (m *MemoryCursors) SaveCursor(_ context.Context, name string, v int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]int64{}
	}
	if v > m.m[name] {
		m.m[name] = v
	}
	return nil
}
