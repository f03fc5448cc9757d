package jetstream

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Defaults for Config.
const (
	LanesDefault         = 8
	LaneBufferDefault    = 64
	BackoffMinDefault    = 500 * time.Millisecond
	BackoffMaxDefault    = 30 * time.Second
	FlushIntervalDefault = time.Second
	CursorNameDefault    = "jetstream"
)

// CursorStore keeps the durable cursor.
type CursorStore interface {
	LoadCursor(ctx context.Context, name string) (timeUS int64, ok bool, err error)
	SaveCursor(ctx context.Context, name string, timeUS int64) error
}

// Handler processes one event. It returns nil once the event is durably
// handled, whatever its outcome (done, dropped, queued for redrive). An
// error means nothing durable happened: the lane retries the event with
// backoff and the cursor does not pass it.
type Handler func(ctx context.Context, f Frame) error

// Config configures a Consumer. The zero value needs only URL.
type Config struct {
	// URL is the /subscribe endpoint (ws:// or wss://), with any filters
	// already in its query. cursor is set by the consumer.
	URL string
	// Lanes is the number of ordered lanes; a DID always maps to the same
	// lane. Defaults to LanesDefault.
	Lanes int
	// LaneBuffer is each lane's queue length. Defaults to LaneBufferDefault.
	LaneBuffer int
	// BackoffMin and BackoffMax bound the reconnect and retry backoff.
	// Default to BackoffMinDefault and BackoffMaxDefault.
	BackoffMin, BackoffMax time.Duration
	// FlushInterval is how often the cursor is saved. Defaults to
	// FlushIntervalDefault.
	FlushInterval time.Duration
	// CursorName keys the cursor row. Defaults to CursorNameDefault.
	CursorName string
	// Logger defaults to discarding.
	Logger *slog.Logger
}

// Consumer reads a Jetstream and runs a Handler per event.
type Consumer struct {
	cfg     Config
	cursors CursorStore
	handle  Handler
	log     *slog.Logger

	lanes []chan job
	track tracker
}

type job struct {
	fn   func(context.Context)
	done chan struct{} // closed after fn ran; nil for stream events
}

// New returns a Consumer. It does not dial.
func New(cursors CursorStore, h Handler, cfg *Config) (*Consumer, error) {
	c := Config{}
	if cfg != nil {
		c = *cfg
	}
	if c.Lanes <= 0 {
		c.Lanes = LanesDefault
	}
	if c.LaneBuffer <= 0 {
		c.LaneBuffer = LaneBufferDefault
	}
	if c.BackoffMin <= 0 {
		c.BackoffMin = BackoffMinDefault
	}
	if c.BackoffMax <= 0 {
		c.BackoffMax = BackoffMaxDefault
	}
	if c.BackoffMax < c.BackoffMin {
		c.BackoffMax = c.BackoffMin
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = FlushIntervalDefault
	}
	if c.CursorName == "" {
		c.CursorName = CursorNameDefault
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if cursors == nil || h == nil {
		return nil, errors.New("jetstream: nil cursor store or handler")
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return nil, fmt.Errorf("jetstream: URL %q: want ws:// or wss://", c.URL)
	}
	lanes := make([]chan job, c.Lanes)
	for i := range lanes {
		lanes[i] = make(chan job, c.LaneBuffer)
	}
	return &Consumer{cfg: c, cursors: cursors, handle: h, log: c.Logger, lanes: lanes}, nil
}

// Run consumes until ctx ends, reconnecting with backoff. It returns
// ctx's error, or an error if the stored cursor cannot be read. Call it
// once at a time.
func (c *Consumer) Run(ctx context.Context) error {
	cursor, ok, err := c.cursors.LoadCursor(ctx, c.cfg.CursorName)
	if err != nil {
		return err
	}
	if !ok {
		cursor = 0
	}
	c.track.init(cursor)

	laneCtx, stopLanes := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := range c.lanes {
		wg.Add(1)
		go func(ch chan job) {
			defer wg.Done()
			for {
				select {
				case <-laneCtx.Done():
					return
				case j := <-ch:
					j.fn(laneCtx)
					if j.done != nil {
						close(j.done)
					}
				}
			}
		}(c.lanes[i])
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.flushLoop(laneCtx)
	}()

	// Which events at the stored cursor were handled is not recorded: the
	// cursor only passes a time_us once every event read at it is handled.
	pos := &position{timeUS: cursor, all: cursor > 0}
	backoff := c.cfg.BackoffMin
	for ctx.Err() == nil {
		got, err := c.session(ctx, pos)
		if ctx.Err() != nil {
			break
		}
		if got {
			backoff = c.cfg.BackoffMin
		}
		c.log.Warn("jetstream: disconnected", "err", err, "cursor", pos.timeUS, "retry_in", backoff)
		if !sleep(ctx, jitter(backoff)) {
			break
		}
		backoff = min(backoff*2, c.cfg.BackoffMax)
	}
	stopLanes()
	wg.Wait()
	// A last save with a fresh context: the run's context is already done.
	fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c.flush(fctx)
	return ctx.Err()
}

// session dials once, from the last time_us read, and reads until the
// connection fails. It reports whether any frame arrived (to reset the
// backoff).
func (c *Consumer) session(ctx context.Context, pos *position) (bool, error) {
	u, _ := url.Parse(c.cfg.URL)
	q := u.Query()
	if pos.timeUS > 0 {
		q.Set("cursor", strconv.FormatInt(pos.timeUS, 10))
	} else {
		q.Del("cursor")
	}
	u.RawQuery = q.Encode()
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	conn, _, err := websocket.Dial(dctx, u.String(), nil)
	cancel()
	if err != nil {
		return false, fmt.Errorf("dial: %w", err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(maxFrameBytes)
	c.log.Info("jetstream: connected", "cursor", pos.timeUS)
	got := false
	for {
		_, b, err := conn.Read(ctx)
		if err != nil {
			return got, err
		}
		got = true
		f, err := Parse(b)
		if pos.taken(f) {
			continue // a replay of something already read
		}
		pos.take(f)
		if err != nil {
			c.log.Warn("jetstream: dropping malformed frame", "err", err, "time_us", f.TimeUS)
			if f.TimeUS > 0 {
				c.track.finish(c.track.add(f.TimeUS))
			}
			continue
		}
		e := c.track.add(f.TimeUS)
		fr := f
		j := job{fn: func(lctx context.Context) {
			if c.runWithRetry(lctx, fr) {
				c.track.finish(e)
			}
		}}
		select {
		case c.lanes[c.lane(f.DID)] <- j:
		case <-ctx.Done():
			return got, ctx.Err()
		}
	}
}

// position is how far the stream has been read: the last time_us, and
// which events at it were read. Jetstream stamps time_us from its clock,
// so events can share one, and it replays from a cursor inclusively: a
// reconnect skips exactly the events already read, not every event that
// shares the microsecond.
type position struct {
	timeUS int64
	keys   map[string]bool // events read at timeUS
	all    bool            // every event at timeUS counts as read (a stored cursor)
}

// taken reports whether f was already read. A frame without a time_us
// cannot be placed and is never a replay.
func (p *position) taken(f Frame) bool {
	switch {
	case f.TimeUS <= 0 || f.TimeUS > p.timeUS:
		return false
	case f.TimeUS < p.timeUS:
		return true
	}
	return p.all || p.keys[eventKey(f)]
}

func (p *position) take(f Frame) {
	if f.TimeUS <= 0 {
		return
	}
	if f.TimeUS > p.timeUS {
		p.timeUS, p.all = f.TimeUS, false
		clear(p.keys)
	}
	if p.keys == nil {
		p.keys = map[string]bool{}
	}
	p.keys[eventKey(f)] = true
}

// eventKey names an event among those sharing its time_us: its DID, kind
// and upstream position (the relay seq, or the commit's rev and record).
// A frame that did not parse far enough is named by its bytes.
func eventKey(f Frame) string {
	switch {
	case f.Identity != nil:
		return f.DID + " identity " + strconv.FormatInt(f.Identity.Seq, 10)
	case f.Account != nil:
		return f.DID + " account " + strconv.FormatInt(f.Account.Seq, 10)
	case f.Commit != nil:
		return f.DID + " commit " + f.Commit.Rev + " " + f.Commit.Operation + " " + f.Commit.Collection + "/" + f.Commit.RKey
	}
	return string(f.Raw)
}

// runWithRetry retries until the handler reports durable handling or the
// lane stops. It reports success.
func (c *Consumer) runWithRetry(ctx context.Context, f Frame) bool {
	backoff := c.cfg.BackoffMin
	for {
		err := c.handle(ctx, f)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		c.log.Error("jetstream: handler failed, retrying", "did", f.DID, "time_us", f.TimeUS, "err", err)
		if !sleep(ctx, jitter(backoff)) {
			return false
		}
		backoff = min(backoff*2, c.cfg.BackoffMax)
	}
}

// Do runs fn on did's lane, after the lane's queued events, and waits for
// it. It lets a redriver share the per-DID ordering. Without a running
// Run it waits until one starts or ctx ends.
func (c *Consumer) Do(ctx context.Context, did string, fn func(context.Context)) error {
	j := job{fn: fn, done: make(chan struct{})}
	select {
	case c.lanes[c.lane(did)] <- j:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-j.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Consumer) lane(did string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(did))
	return int(h.Sum32() % uint32(len(c.lanes)))
}

// Cursor returns the time_us up to which every event is handled.
func (c *Consumer) Cursor() int64 { return c.track.mark() }

func (c *Consumer) flushLoop(ctx context.Context) {
	t := time.NewTicker(c.cfg.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.flush(ctx)
		}
	}
}

func (c *Consumer) flush(ctx context.Context) {
	m, changed := c.track.takeDirty()
	if !changed {
		return
	}
	if err := c.cursors.SaveCursor(ctx, c.cfg.CursorName, m); err != nil {
		c.track.markDirty()
		c.log.Error("jetstream: save cursor", "err", err, "cursor", m)
	}
}

// tracker keeps events in arrival order and moves the watermark over the
// longest finished prefix, so the cursor never passes an unfinished event.
type tracker struct {
	mu        sync.Mutex
	queue     []*entry
	watermark int64
	dirty     bool
}

type entry struct {
	timeUS int64
	done   bool
}

func (t *tracker) init(cursor int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.queue = nil
	t.watermark = cursor
	t.dirty = false
}

func (t *tracker) add(timeUS int64) *entry {
	e := &entry{timeUS: timeUS}
	t.mu.Lock()
	t.queue = append(t.queue, e)
	t.mu.Unlock()
	return e
}

func (t *tracker) finish(e *entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e.done = true
	n := 0
	for n < len(t.queue) && t.queue[n].done {
		n++
	}
	if n == 0 {
		return
	}
	// The cursor means every event at or before it is handled, so it stops
	// short of a time_us that an unfinished event shares with finished ones.
	limit := int64(math.MaxInt64)
	if n < len(t.queue) {
		limit = t.queue[n].timeUS
	}
	for _, q := range t.queue[:n] {
		if q.timeUS < limit && q.timeUS > t.watermark {
			t.watermark = q.timeUS
			t.dirty = true
		}
	}
	t.queue = append(t.queue[:0:0], t.queue[n:]...)
}

func (t *tracker) mark() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.watermark
}

func (t *tracker) takeDirty() (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.dirty
	t.dirty = false
	return t.watermark, d
}

func (t *tracker) markDirty() {
	t.mu.Lock()
	t.dirty = true
	t.mu.Unlock()
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// jitter spreads reconnects over [d/2, d).
func jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(half)
}
