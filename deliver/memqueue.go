package deliver

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
)

var _ driver.Queue = (*MemoryQueue)(nil)

// MemoryQueue is a Queue in process memory: the default, and the reference
// behaviour for other backends. Its jobs do not survive a restart, and it
// keeps each tag's counts for its own life, so give batches tags from a
// bounded set (untagged sends share one). The zero value is ready to use.
type MemoryQueue struct {
	mu     sync.Mutex
	nextID int64
	token  int64
	jobs   map[int64]*memJob
	lanes  [3]jobHeap // indexed by Lane+1
	leased map[int64]*memJob
	// leaseScanAt is at or before every lease in leased: no claim before it
	// finds one lapsed.
	leaseScanAt time.Time
	chains      map[chainKey][]int64
	batches     map[string]*driver.BatchStatus
	depth       [3]int // jobs not finished, indexed as lanes
}

type chainKey struct{ key, inbox string }

type memJob struct {
	id         int64
	env        *driver.Envelope
	inbox      string
	due        time.Time
	attempts   int
	token      int64
	leaseUntil time.Time
	leased     bool
	index      int // position in its lane heap, -1 when not in one
}

func (q *MemoryQueue) init() {
	if q.jobs == nil {
		q.jobs = make(map[int64]*memJob)
		q.leased = make(map[int64]*memJob)
		q.chains = make(map[chainKey][]int64)
		q.batches = make(map[string]*driver.BatchStatus)
	}
}

func laneIndex(l driver.Lane) int {
	switch {
	case l < driver.LaneNormal:
		return 0
	case l > driver.LaneNormal:
		return 2
	default:
		return 1
	}
}

// Enqueue implements Queue.
func (q *MemoryQueue) Enqueue(ctx context.Context, e *driver.Envelope) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.init()
	bs := q.batch(e.Tag)
	for _, inbox := range e.Inboxes {
		q.nextID++
		j := &memJob{id: q.nextID, env: e, inbox: inbox, due: e.EnqueuedAt, index: -1}
		q.jobs[j.id] = j
		q.depth[laneIndex(e.Lane)]++
		bs.Pending++
		if e.OrderingKey != "" {
			k := chainKey{e.OrderingKey, inbox}
			q.chains[k] = append(q.chains[k], j.id)
			if len(q.chains[k]) > 1 {
				continue // waits for its predecessor to leave
			}
		}
		heap.Push(&q.lanes[laneIndex(e.Lane)], j)
	}
	return nil
}

func (q *MemoryQueue) batch(tag string) *driver.BatchStatus {
	bs := q.batches[tag]
	if bs == nil {
		bs = &driver.BatchStatus{}
		q.batches[tag] = bs
	}
	return bs
}

// Claim implements Queue.
func (q *MemoryQueue) Claim(ctx context.Context, opts driver.ClaimOpts) ([]*driver.Job, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.init()
	// No lease lapses before the earliest of them: scanning every lease on
	// every claim would cost a fan-out with thousands in flight dearly.
	if len(q.leased) > 0 && !opts.Now.Before(q.leaseScanAt) {
		q.leaseScanAt = time.Time{}
		for id, j := range q.leased {
			if !j.leaseUntil.After(opts.Now) {
				delete(q.leased, id)
				j.leased = false
				heap.Push(&q.lanes[laneIndex(j.env.Lane)], j)
				continue
			}
			if q.leaseScanAt.IsZero() || j.leaseUntil.Before(q.leaseScanAt) {
				q.leaseScanAt = j.leaseUntil
			}
		}
	}
	var out []*driver.Job
	for li := range q.lanes {
		h := &q.lanes[li]
		for len(out) < opts.Limit && h.Len() > 0 && !(*h)[0].due.After(opts.Now) {
			j := heap.Pop(h).(*memJob)
			q.token++
			j.token = q.token
			j.leased = true
			j.leaseUntil = opts.Now.Add(opts.Lease)
			if len(q.leased) == 0 || j.leaseUntil.Before(q.leaseScanAt) {
				q.leaseScanAt = j.leaseUntil
			}
			q.leased[j.id] = j
			out = append(out, &driver.Job{ID: j.id, Token: j.token, LeaseUntil: j.leaseUntil,
				Inbox: j.inbox, Attempts: j.attempts, Envelope: j.env})
		}
	}
	return out, nil
}

// Finish implements Queue.
func (q *MemoryQueue) Finish(ctx context.Context, ref driver.JobRef, o driver.Outcome) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.init()
	j := q.jobs[ref.ID]
	if j == nil || !j.leased || j.token != ref.Token {
		return driver.ErrLeaseLost
	}
	delete(q.leased, j.id)
	j.leased = false
	j.attempts = o.Attempts
	if o.Result == driver.ResultPending {
		j.due = o.RetryAt
		heap.Push(&q.lanes[laneIndex(j.env.Lane)], j)
		return nil
	}
	bs := q.batch(j.env.Tag)
	switch o.Result {
	case driver.ResultDelivered:
		bs.Delivered++
	case driver.ResultFailed:
		bs.Failed++
	case driver.ResultGaveUp:
		bs.GaveUp++
	case driver.ResultSkipped:
		bs.Skipped++
	}
	q.remove(j)
	return nil
}

// remove takes j out of every index and lets its successor in line be claimed.
func (q *MemoryQueue) remove(j *memJob) {
	delete(q.jobs, j.id)
	delete(q.leased, j.id)
	q.depth[laneIndex(j.env.Lane)]--
	if j.index >= 0 {
		heap.Remove(&q.lanes[laneIndex(j.env.Lane)], j.index)
	}
	q.batch(j.env.Tag).Pending--
	if j.env.OrderingKey == "" {
		return
	}
	k := chainKey{j.env.OrderingKey, j.inbox}
	chain := q.chains[k]
	for i, id := range chain {
		if id != j.id {
			continue
		}
		chain = append(chain[:i], chain[i+1:]...)
		if i == 0 && len(chain) > 0 {
			next := q.jobs[chain[0]]
			heap.Push(&q.lanes[laneIndex(next.env.Lane)], next)
		}
		break
	}
	if len(chain) == 0 {
		delete(q.chains, k)
	} else {
		q.chains[k] = chain
	}
}

// Status implements Queue.
func (q *MemoryQueue) Status(ctx context.Context, tag string) (driver.BatchStatus, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if bs := q.batches[tag]; bs != nil {
		return *bs, nil
	}
	return driver.BatchStatus{}, nil
}

// Drop implements Queue.
func (q *MemoryQueue) Drop(ctx context.Context, f driver.DropFilter) (int, error) {
	if f.IsZero() {
		return 0, driver.ErrEmptyDropFilter
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.init()
	var victims []*memJob
	for _, j := range q.jobs {
		e := j.env
		if (f.ActivityID == "" || f.ActivityID == e.ActivityID) &&
			(f.ActorID == "" || f.ActorID == e.ActorID) &&
			(f.Tag == "" || f.Tag == e.Tag) {
			victims = append(victims, j)
		}
	}
	for _, v := range victims {
		q.batch(v.env.Tag).Dropped++
		q.remove(v)
	}
	return len(victims), nil
}

// Depth returns how many deliveries wait in each lane: due, scheduled for a
// retry or claimed, as Status counts a batch's Pending; finished and dropped
// ones have left. Every lane is in the map, zero when empty. It has the
// meaning of pgqueue's Queue.Depth, so a status page can show either; an
// Envelope.Lane outside the three lanes counts in the lane it is claimed
// from.
func (q *MemoryQueue) Depth() map[driver.Lane]int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return map[driver.Lane]int{
		driver.LanePriority: q.depth[laneIndex(driver.LanePriority)],
		driver.LaneNormal:   q.depth[laneIndex(driver.LaneNormal)],
		driver.LaneLow:      q.depth[laneIndex(driver.LaneLow)],
	}
}

// Len returns how many jobs are in the queue, claimed or not.
func (q *MemoryQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.jobs)
}

type jobHeap []*memJob

func (h jobHeap) Len() int { return len(h) }
func (h jobHeap) Less(a, b int) bool {
	if !h[a].due.Equal(h[b].due) {
		return h[a].due.Before(h[b].due)
	}
	return h[a].id < h[b].id
}
func (h jobHeap) Swap(a, b int) {
	h[a], h[b] = h[b], h[a]
	h[a].index = a
	h[b].index = b
}
func (h *jobHeap) Push(x any) {
	j := x.(*memJob)
	j.index = len(*h)
	*h = append(*h, j)
}
func (h *jobHeap) Pop() any {
	old := *h
	j := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	j.index = -1
	return j
}
