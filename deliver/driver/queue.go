package driver

import (
	"context"
	"errors"
	"time"
)

// Lane says which queue lane a delivery waits in. Claims take the priority
// lane first, then the normal lane, and the low lane only when nothing else is
// due. Lanes sort numerically in claim order, so a SQL backend can ORDER BY
// lane.
type Lane int8

const (
	// LanePriority is for sends to a few inboxes, such as a reply or a
	// direct message, that should go ahead of a post to thousands.
	LanePriority Lane = -1
	// LaneNormal is the default lane.
	LaneNormal Lane = 0
	// LaneLow is claimed only when nothing in the other lanes is due.
	LaneLow Lane = 1
)

// String returns "priority", "normal" or "low".
func (l Lane) String() string {
	switch l {
	case LanePriority:
		return "priority"
	case LaneLow:
		return "low"
	default:
		return "normal"
	}
}

// Envelope is one send as a Queue stores it: the activity body once, and the
// inboxes it fans out to, one job each. A Queue must store Body once per
// Envelope, not once per inbox, and must not modify an Envelope it is given
// or hands out.
type Envelope struct {
	// KeyID names the sender's key; the deliverer loads it through SenderKeys
	// when a job is sent.
	KeyID string
	// ActivityID and ActorID are the activity's "id" and "actor", kept so
	// pending deliveries can be dropped by either (Queue.Drop).
	ActivityID string
	ActorID    string
	// Body is the serialised activity, sent as is.
	Body []byte
	// Inboxes are the destinations, already deduplicated; one job each.
	Inboxes []string
	// EnqueuedAt is when the jobs are first due.
	EnqueuedAt time.Time

	// Tag names the batch for Queue.Status and the OnSettled hook.
	Tag string
	// Deadline, when set, is when the deliverer gives a job up.
	Deadline time.Time
	// MaxAttempts, when above zero, caps the attempts below the retry policy's.
	MaxAttempts int
	// Lane is the claim lane.
	Lane Lane
	// OrderingKey, when set, makes each inbox's jobs with this key claimable
	// one at a time, in the order they were enqueued: a job is not claimed
	// while an earlier job with the same key and inbox is still in the queue.
	OrderingKey string
	// SynchronizeCollection asks the deliverer to add a
	// Collection-Synchronization header (FEP-8fcf).
	SynchronizeCollection bool
	// TraceParent is the W3C traceparent of the span that queued the send
	// (empty when none was recording), so that each attempt's span links to
	// it across processes. A Queue stores and returns it as is.
	TraceParent string
}

// Job is one claimed delivery: an Envelope and one of its inboxes.
type Job struct {
	// ID identifies the job within its Queue.
	ID int64
	// Token is the fencing token of this claim; Finish must present it, and
	// a newer claim of the same job invalidates it.
	Token int64
	// LeaseUntil is when the claim lapses and the job may be claimed again.
	LeaseUntil time.Time
	// Inbox is the destination.
	Inbox string
	// Attempts is how many attempts were recorded before this claim.
	Attempts int
	// Envelope is the send this job belongs to, shared between its jobs.
	// Its Inboxes may be empty on a claimed job: a backend need not load
	// every inbox of a send to hand out one, and the deliverer reads only
	// Job.Inbox.
	Envelope *Envelope
}

// Ref returns the reference Finish takes.
func (j *Job) Ref() JobRef { return JobRef{ID: j.ID, Token: j.Token} }

// JobRef names one claim of a job.
type JobRef struct {
	// ID is the job's Job.ID.
	ID int64
	// Token is the claim's Job.Token.
	Token int64
}

// ClaimOpts are the arguments of Queue.Claim.
type ClaimOpts struct {
	// Now is the time to compare due times and leases against.
	Now time.Time
	// Lease is how long the claim holds.
	Lease time.Duration
	// Limit is the most jobs to claim.
	Limit int
}

// Result is how a delivery ended, or ResultPending while it has not.
type Result int8

const (
	// ResultPending is not an end: Finish with it schedules another attempt.
	ResultPending Result = iota
	// ResultDelivered means the inbox accepted the activity.
	ResultDelivered
	// ResultFailed means the inbox refused it for good (a permanent status).
	ResultFailed
	// ResultGaveUp means attempts ran out or the batch deadline passed.
	ResultGaveUp
	// ResultSkipped means it was not sent: the Deliverer's SkipIf said so,
	// or its host was unavailable.
	ResultSkipped
)

// String returns the result's name.
func (r Result) String() string {
	switch r {
	case ResultDelivered:
		return "delivered"
	case ResultFailed:
		return "failed"
	case ResultGaveUp:
		return "gave_up"
	case ResultSkipped:
		return "skipped"
	default:
		return "pending"
	}
}

// Outcome is what Queue.Finish records for a claimed job.
type Outcome struct {
	// Result settles the job, removing it from the queue; ResultPending
	// instead makes it due again at RetryAt.
	Result Result
	// RetryAt is when a pending job is next due.
	RetryAt time.Time
	// Attempts is the job's attempt count to store (held deliveries count).
	Attempts int
}

// BatchStatus counts a tagged batch's jobs.
type BatchStatus struct {
	// Pending counts jobs still in the queue, claimed or not.
	Pending int
	// Delivered, Failed, GaveUp and Skipped count settled jobs by result.
	Delivered int
	Failed    int
	GaveUp    int
	Skipped   int
	// Dropped counts jobs removed by Queue.Drop.
	Dropped int
}

// Done reports whether nothing of the batch is left in the queue.
func (s BatchStatus) Done() bool { return s.Pending == 0 }

// DropFilter selects jobs for Queue.Drop: every non-empty field must match,
// and at least one must be set.
type DropFilter struct {
	// ActivityID selects one activity's deliveries, such as an undone post's.
	ActivityID string
	// ActorID selects one sender's deliveries, such as a deleted account's.
	ActorID string
	// Tag selects one batch's deliveries.
	Tag string
}

// IsZero reports whether no field is set.
func (f DropFilter) IsZero() bool { return f == DropFilter{} }

// Queue stores deliveries durably for a Deliverer. Implementations must be
// safe for concurrent use, also by several processes sharing one store, and
// must pass drivertest.TestQueue.
type Queue interface {
	// Enqueue stores e and one job per inbox, due at e.EnqueuedAt.
	Enqueue(ctx context.Context, e *Envelope) error
	// Claim leases up to opts.Limit jobs that are due at opts.Now and not
	// under an unexpired lease, priority lane first and the low lane last,
	// then by due time and enqueue order. A job with an OrderingKey is not
	// claimed while an earlier job with the same key and inbox remains.
	// Each claim carries a new fencing token.
	Claim(ctx context.Context, opts ClaimOpts) ([]*Job, error)
	// Finish records a claimed job's outcome: settled, it leaves the queue
	// and is counted under its tag; pending, it is due again at RetryAt. It
	// returns ErrLeaseLost when ref's token is not the job's current claim
	// or the job is gone.
	Finish(ctx context.Context, ref JobRef, o Outcome) error
	// Status counts the jobs of the batch tagged tag; an unknown tag counts
	// nothing.
	Status(ctx context.Context, tag string) (BatchStatus, error)
	// Drop removes the jobs f selects, claimed or not, and returns how many.
	// A claim of a dropped job then finishes with ErrLeaseLost.
	Drop(ctx context.Context, f DropFilter) (int, error)
}

// Notifier is implemented by a Queue that can tell when work is enqueued by
// another process or comes due, such as a Postgres queue using LISTEN and
// NOTIFY. The Deliverer's Run uses it, when the Queue has it, besides its
// PollInterval.
type Notifier interface {
	// Notify calls wake whenever work may be claimable, until ctx ends; it
	// returns nil then. now is the caller's clock (the Deliverer's
	// Config.Now), the one due times are stored on: a Notifier that waits
	// for work to come due measures the wait with it, never with a clock
	// of its own.
	Notify(ctx context.Context, now func() time.Time, wake func()) error
}

// DepthCounter is implemented by a Queue that can count its jobs per lane,
// for the fedkit.deliver.queue.depth gauge the Deliverer reports while Run
// runs.
type DepthCounter interface {
	// Depth returns how many jobs wait in each lane, due, scheduled for a
	// retry or claimed (as BatchStatus counts Pending), with every lane in
	// the map.
	Depth(ctx context.Context) (map[Lane]int, error)
}

var (
	// ErrLeaseLost is returned by Queue.Finish when the claim is no longer
	// the job's current one (its lease lapsed and it was claimed again, or
	// it was dropped).
	ErrLeaseLost = errors.New("deliver: lease lost")
	// ErrEmptyDropFilter is returned by Queue.Drop, and so by the
	// Deliverer's Drop, for a filter that would select every job.
	ErrEmptyDropFilter = errors.New("deliver: empty drop filter")
	// ErrQueueUnavailable is matched, with errors.Is, by the error of a
	// Queue whose store cannot be reached for now: the database is down,
	// restarting or refusing connections. Nothing was stored; the call may
	// be retried once the store is back. The Deliverer's Send and
	// SendBatch return it as the Queue gave it, so an application can
	// answer "try again" rather than fail the request.
	ErrQueueUnavailable = errors.New("deliver: queue unavailable")
)
