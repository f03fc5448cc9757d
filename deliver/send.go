package deliver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
)

// Batch says how a send is to be delivered.
type Batch struct {
	// Tag names the batch for Status and OnSettled.
	Tag string
	// Deadline, when set, is when a delivery is given up rather than retried.
	Deadline time.Time
	// MaxAttempts, when above zero, lowers the retry policy's attempts.
	MaxAttempts int
	// Lane is the queue lane: LanePriority goes ahead of the normal lane,
	// LaneLow is claimed only when nothing else is due. Defaults to
	// LaneNormal, or LanePriority for a send to at most
	// Config.PriorityMaxInboxes inboxes.
	Lane driver.Lane
	// OrderingKey makes the batch reach each inbox in the order it was
	// queued among batches with this key. Give the activity's object: its
	// Delete then waits until its Create is delivered or given up.
	OrderingKey string
	// SynchronizeCollection adds an FEP-8fcf Collection-Synchronization
	// header, from Config.Followers.
	SynchronizeCollection bool
}

// Send queues activity for each inbox under the default Batch.
func (d *Deliverer) Send(ctx context.Context, keyID string, activity []byte, inboxes []string) error {
	return d.SendBatch(ctx, keyID, activity, inboxes, Batch{})
}

// SendBatch queues activity, a JSON object, for each inbox, signed with the
// key keyID names. Duplicate inboxes are sent once; inboxes that are not
// absolute http(s) URLs the client accepts are left out and logged. It
// returns ErrNoInboxes when none is left.
func (d *Deliverer) SendBatch(ctx context.Context, keyID string, activity []byte, inboxes []string, b Batch) error {
	var head struct {
		ID    string          `json:"id"`
		Actor json.RawMessage `json:"actor"`
	}
	if err := json.Unmarshal(activity, &head); err != nil || !bytes.HasPrefix(bytes.TrimSpace(activity), []byte("{")) {
		return ErrNotJSON
	}
	e := &driver.Envelope{
		KeyID:                 keyID,
		ActivityID:            head.ID,
		ActorID:               actorID(head.Actor),
		Body:                  bytes.Clone(activity),
		Inboxes:               d.cleanInboxes(inboxes),
		EnqueuedAt:            d.cfg.Now(),
		Tag:                   b.Tag,
		Deadline:              b.Deadline,
		MaxAttempts:           b.MaxAttempts,
		OrderingKey:           b.OrderingKey,
		SynchronizeCollection: b.SynchronizeCollection,
	}
	if len(e.Inboxes) == 0 {
		return ErrNoInboxes
	}
	e.Lane = b.Lane
	if e.Lane == driver.LaneNormal && d.cfg.PriorityMaxInboxes > 0 && len(e.Inboxes) <= d.cfg.PriorityMaxInboxes {
		e.Lane = driver.LanePriority
	}
	ctx, span := d.startEnqueue(ctx, e)
	err := d.queue.Enqueue(ctx, e)
	endSpan(span, err)
	if err != nil {
		return err
	}
	select {
	case d.wake <- struct{}{}:
	default:
	}
	return nil
}

func actorID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.ID
	}
	return ""
}

// cleanInboxes drops duplicates and URLs the client would refuse, keeping
// the caller's order.
func (d *Deliverer) cleanInboxes(inboxes []string) []string {
	seen := make(map[string]struct{}, len(inboxes))
	out := make([]string, 0, len(inboxes))
	for _, raw := range inboxes {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
			d.log.Warn("deliver: inbox left out", "inbox", raw)
			continue
		}
		u.Scheme = strings.ToLower(u.Scheme)
		u.Host = strings.ToLower(u.Host)
		u.Fragment = ""
		s := u.String()
		if _, dup := seen[s]; dup {
			continue
		}
		if err := d.client.ValidateURL(s); err != nil {
			d.log.Warn("deliver: inbox left out", "inbox", raw, "err", err)
			continue
		}
		seen[s] = struct{}{}
		out = append(out, s)
	}
	return out
}

// Status reports how the batch tagged tag stands.
func (d *Deliverer) Status(ctx context.Context, tag string) (driver.BatchStatus, error) {
	return d.queue.Status(ctx, tag)
}

// Drop removes queued deliveries f selects, such as a deleted account's or
// an undone post's, and returns how many.
func (d *Deliverer) Drop(ctx context.Context, f driver.DropFilter) (int, error) {
	return d.queue.Drop(ctx, f)
}
