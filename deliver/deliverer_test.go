package deliver_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/colsync"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/sig"
)

func TestDeliveredSignedAndSettled(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ib := newInbox(t, b.clock, nil)
	b.sendBatch(t, "1", deliver.Batch{Tag: "t1"}, ib.URL("/inbox"), ib.URL("/users/bob/inbox"))
	if n := b.runDue(t); n != 2 {
		t.Fatalf("handled %d, want 2", n)
	}
	got := ib.requests()
	if len(got) != 2 {
		t.Fatalf("inbox got %d requests, want 2", len(got))
	}
	for _, r := range got {
		if r.VerifyErr != nil {
			t.Errorf("signature did not verify: %v", r.VerifyErr)
		}
		if r.Scheme != sig.SchemeRFC9421 {
			t.Errorf("signed with %v, want RFC 9421 first for an Ed25519 key", r.Scheme)
		}
		if r.Body != string(activity("1")) {
			t.Errorf("body %q", r.Body)
		}
		if r.ContentType != deliver.ContentTypeDefault {
			t.Errorf("Content-Type %q, want %q as Mastodon sends", r.ContentType, deliver.ContentTypeDefault)
		}
	}
	st, _ := b.d.Status(context.Background(), "t1")
	if st != (driver.BatchStatus{Delivered: 2}) {
		t.Fatalf("status %+v, want 2 delivered", st)
	}
	settled := b.rec.Settled()
	if len(settled) != 2 {
		t.Fatalf("%d settlements, want 2", len(settled))
	}
	for _, s := range settled {
		if s.Result != driver.ResultDelivered || s.Tag != "t1" || s.Err != nil || s.Attempts != 1 {
			t.Errorf("settlement %+v", s)
		}
	}
}

// recordingQueue counts Enqueue calls around a MemoryQueue.
type recordingQueue struct {
	*deliver.MemoryQueue
	mu        sync.Mutex
	envelopes []*driver.Envelope
}

func (q *recordingQueue) Enqueue(ctx context.Context, e *driver.Envelope) error {
	q.mu.Lock()
	q.envelopes = append(q.envelopes, e)
	q.mu.Unlock()
	return q.MemoryQueue.Enqueue(ctx, e)
}

func TestFanOutDedupesAndStoresBodyOnce(t *testing.T) {
	t.Parallel()
	q := &recordingQueue{MemoryQueue: &deliver.MemoryQueue{}}
	d, err := deliver.New(q, &keys{}, testClient(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	inboxes := []string{
		"https://b.example/inbox", "https://B.example/inbox", "https://b.example/inbox#x",
		"https://c.example/inbox", "ftp://d.example/inbox", "not a url", "https://c.example/inbox",
	}
	if err := d.Send(context.Background(), testKeyID, activity("1"), inboxes); err != nil {
		t.Fatal(err)
	}
	if len(q.envelopes) != 1 {
		t.Fatalf("%d enqueues, want 1 per send", len(q.envelopes))
	}
	e := q.envelopes[0]
	want := []string{"https://b.example/inbox", "https://c.example/inbox"}
	if !slices.Equal(e.Inboxes, want) {
		t.Fatalf("inboxes %v, want %v", e.Inboxes, want)
	}
	if e.ActivityID != "https://a.example/activities/1" || e.ActorID != testActor {
		t.Fatalf("activity/actor ids %q %q", e.ActivityID, e.ActorID)
	}
	jobs, _ := q.Claim(context.Background(), driver.ClaimOpts{Now: time.Now().Add(time.Second), Lease: time.Minute, Limit: 10})
	if len(jobs) != 2 || jobs[0].Envelope != jobs[1].Envelope {
		t.Fatalf("jobs do not share one stored envelope")
	}
}

func TestSendRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	for _, tc := range []struct {
		name     string
		activity string
		inboxes  []string
		want     error
	}{
		{"NotJSON", `"just a string"`, []string{"https://b.example/inbox"}, deliver.ErrNotJSON},
		{"Garbage", `{not json`, []string{"https://b.example/inbox"}, deliver.ErrNotJSON},
		{"NoInboxes", `{"id":"x"}`, nil, deliver.ErrNoInboxes},
		{"OnlyBadInboxes", `{"id":"x"}`, []string{"mailto:x@b.example", "https://user:pw@b.example/inbox"}, deliver.ErrNoInboxes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := b.d.Send(context.Background(), testKeyID, []byte(tc.activity), tc.inboxes)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Send: %v, want %v", err, tc.want)
			}
		})
	}
}

func TestRetryClassification(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		status    int
		permanent func(int) bool
		gone      []int
		senderOff bool
		want      deliver.AttemptOutcome
	}{
		{"202Delivered", 202, nil, nil, false, deliver.AttemptDelivered},
		{"408Retried", 408, nil, nil, false, deliver.AttemptFailed},
		{"429Retried", 429, nil, nil, false, deliver.AttemptFailed},
		{"500Retried", 500, nil, nil, false, deliver.AttemptFailed},
		{"503Retried", 503, nil, nil, false, deliver.AttemptFailed},
		{"501RetriedByDefault", 501, nil, nil, false, deliver.AttemptFailed},
		{"400Permanent", 400, nil, nil, false, deliver.AttemptRefused},
		{"403Permanent", 403, nil, nil, false, deliver.AttemptRefused},
		{"404Permanent", 404, nil, nil, false, deliver.AttemptRefused},
		{"410Permanent", 410, nil, nil, false, deliver.AttemptRefused},
		{"401PermanentByDefault", 401, nil, nil, false, deliver.AttemptRefused},
		{"Mastodon401Retried", 401, deliver.MastodonPermanent, []int{401}, false, deliver.AttemptFailed},
		{"Mastodon401SenderGonePermanent", 401, deliver.MastodonPermanent, []int{401}, true, deliver.AttemptRefused},
		{"Mastodon501Permanent", 501, deliver.MastodonPermanent, nil, false, deliver.AttemptRefused},
		{"Custom418Retried", 418, func(s int) bool { return s == 404 }, nil, false, deliver.AttemptFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, func(c *deliver.Config) {
				c.Permanent = tc.permanent
				c.PermanentIfSenderGone = tc.gone
			})
			b.keys.gone.Store(tc.senderOff)
			ib := newInbox(t, b.clock, status(tc.status))
			b.send(t, "1", ib.URL("/inbox"))
			b.runDue(t)
			atts := b.rec.Attempts()
			if len(atts) != 1 {
				t.Fatalf("%d attempts, want 1", len(atts))
			}
			a := atts[0]
			if a.StatusCode != tc.status || a.Number != 1 || a.Host != ib.srv.Listener.Addr().String() || a.Inbox != ib.URL("/inbox") {
				t.Errorf("attempt %+v", a)
			}
			if tc.want == deliver.AttemptDelivered {
				if a.Outcome != deliver.AttemptDelivered || a.Err != nil {
					t.Fatalf("attempt %+v, want delivered", a)
				}
				return
			}
			var derr *deliver.DeliveryError
			if a.Outcome != tc.want || !errors.As(a.Err, &derr) || derr.Outcome != tc.want || derr.StatusCode != tc.status {
				t.Fatalf("attempt %v: %v, want %v with status %d", a.Outcome, a.Err, tc.want, tc.status)
			}
			fails, settled := b.rec.Failures(), b.rec.Settled()
			if tc.want == deliver.AttemptRefused {
				if len(fails) != 1 || fails[0].StatusCode != tc.status || fails[0].Err.Outcome != deliver.AttemptRefused {
					t.Fatalf("OnFailure saw %+v", fails)
				}
				if len(settled) != 1 || settled[0].Result != driver.ResultFailed || !errors.Is(settled[0].Err, fails[0].Err) {
					t.Fatalf("settled %+v, want failed", settled)
				}
				return
			}
			if len(fails) != 0 || len(settled) != 0 {
				t.Fatalf("retryable status reported as failure %+v / settled %+v", fails, settled)
			}
			b.clock.Advance(29 * time.Second)
			if n := b.runDue(t); n != 0 {
				t.Fatalf("retried before the policy's 30 s")
			}
			b.clock.Advance(time.Second)
			if n := b.runDue(t); n != 1 {
				t.Fatalf("not retried at 30 s")
			}
		})
	}
}

func TestNetworkErrorRetried(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ib := newInbox(t, b.clock, nil)
	url := ib.URL("/inbox")
	ib.srv.Close()
	b.send(t, "1", url)
	b.runDue(t)
	a := b.rec.Attempts()[0]
	var derr *deliver.DeliveryError
	if a.Outcome != deliver.AttemptFailed || !errors.As(a.Err, &derr) || derr.Outcome != deliver.AttemptFailed || derr.StatusCode != 0 || derr.Err == nil {
		t.Fatalf("attempt %v: %#v, want a failed attempt with the network error", a.Outcome, a.Err)
	}
}

func TestEveryAttemptSignedAfresh(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ib := newInbox(t, b.clock, func(_ *http.Request, n int) (int, http.Header) {
		if n < 3 {
			return 503, nil
		}
		return 202, nil
	})
	b.send(t, "1", ib.URL("/inbox"))
	for range 3 {
		b.runDue(t)
		b.clock.Advance(time.Hour)
	}
	got := ib.requests()
	if len(got) != 3 {
		t.Fatalf("%d requests, want 3", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i].Date == got[i-1].Date || got[i].Signature == got[i-1].Signature {
			t.Errorf("attempt %d reused Date or signature of attempt %d", i+1, i)
		}
		if got[i].VerifyErr != nil {
			t.Errorf("attempt %d: %v", i+1, got[i].VerifyErr)
		}
	}
}

func TestRetryAfterLongerThanPolicyRespected(t *testing.T) {
	t.Parallel()
	base := newClock().Now()
	for _, tc := range []struct {
		name       string
		retryAfter string
		noWait     bool
		wantDelay  time.Duration
	}{
		{"Seconds", "600", false, 600 * time.Second},
		{"HTTPDate", base.Add(20 * time.Minute).Format(http.TimeFormat), false, 20 * time.Minute},
		{"ShorterThanPolicy", "5", false, 30 * time.Second},
		{"CappedAtRetryAfterMax", "99999999", false, time.Hour},
		{"WaitAsAskedOff", "600", true, 30 * time.Second},
		{"Unreadable", "soon", false, 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, func(c *deliver.Config) {
				c.DisableWaitAsAsked = tc.noWait
				c.RetryAfterMax = time.Hour
			})
			ib := newInbox(t, b.clock, func(*http.Request, int) (int, http.Header) {
				return 429, http.Header{"Retry-After": {tc.retryAfter}}
			})
			b.send(t, "1", ib.URL("/inbox"))
			b.runDue(t)
			b.clock.Advance(tc.wantDelay - time.Second)
			if n := b.runDue(t); n != 0 {
				t.Fatalf("retried before %v", tc.wantDelay)
			}
			b.clock.Advance(time.Second)
			if n := b.runDue(t); n != 1 {
				t.Fatalf("not retried at %v", tc.wantDelay)
			}
		})
	}
}

func TestDeadlineExpirySettlesAsGivenUp(t *testing.T) {
	t.Parallel()
	t.Run("RetryWouldPassDeadline", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		ib := newInbox(t, b.clock, status(503))
		b.sendBatch(t, "1", deliver.Batch{Tag: "move", Deadline: b.clock.Now().Add(10 * time.Second)}, ib.URL("/inbox"))
		b.runDue(t)
		s := b.rec.Settled()
		if len(s) != 1 || s[0].Result != driver.ResultGaveUp || !errors.Is(s[0].Err, deliver.ErrDeadline) || s[0].Tag != "move" {
			t.Fatalf("settled %+v, want given up past the deadline", s)
		}
		st, _ := b.d.Status(context.Background(), "move")
		if st != (driver.BatchStatus{GaveUp: 1}) {
			t.Fatalf("status %+v", st)
		}
	})
	t.Run("DueAfterDeadlineNotSent", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		ib := newInbox(t, b.clock, nil)
		b.sendBatch(t, "1", deliver.Batch{Deadline: b.clock.Now().Add(time.Minute)}, ib.URL("/inbox"))
		b.clock.Advance(time.Minute)
		b.runDue(t)
		if len(ib.requests()) != 0 {
			t.Fatal("sent past its deadline")
		}
		s := b.rec.Settled()
		if len(s) != 1 || s[0].Result != driver.ResultGaveUp || !errors.Is(s[0].Err, deliver.ErrDeadline) {
			t.Fatalf("settled %+v", s)
		}
	})
}

func TestBatchMaxAttemptsBelowPolicy(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ib := newInbox(t, b.clock, status(500))
	b.sendBatch(t, "1", deliver.Batch{MaxAttempts: 2}, ib.URL("/inbox"))
	for range 5 {
		b.runDue(t)
		b.clock.Advance(time.Hour)
	}
	if n := len(ib.requests()); n != 2 {
		t.Fatalf("%d attempts, want MaxAttempts 2", n)
	}
	s := b.rec.Settled()
	if len(s) != 1 || s[0].Result != driver.ResultGaveUp || !errors.Is(s[0].Err, deliver.ErrExhausted) || s[0].Attempts != 2 {
		t.Fatalf("settled %+v", s)
	}
}

func TestRetryPolicyExhausted(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *deliver.Config) {
		c.Retry = deliver.CustomRetry(func(failed int) (time.Duration, bool) { return time.Second, failed < 3 })
	})
	ib := newInbox(t, b.clock, status(500))
	b.send(t, "1", ib.URL("/inbox"))
	for range 6 {
		b.runDue(t)
		b.clock.Advance(time.Second)
	}
	if n := len(ib.requests()); n != 3 {
		t.Fatalf("%d attempts, want 3", n)
	}
	var derr *deliver.DeliveryError
	s := b.rec.Settled()
	if len(s) != 1 || !errors.Is(s[0].Err, deliver.ErrExhausted) || !errors.As(s[0].Err, &derr) || derr.Outcome != deliver.AttemptFailed || derr.StatusCode != 500 {
		t.Fatalf("settled %+v", s)
	}
}

func TestSkipIf(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var skipped string
	b2 := setup(t, func(c *deliver.Config) {
		c.SkipIf = func(_ context.Context, inbox string, e *driver.Envelope) bool {
			mu.Lock()
			skipped = e.ActivityID
			mu.Unlock()
			return strings.HasSuffix(inbox, "/dead")
		}
	})
	ib := newInbox(t, b2.clock, nil)
	b2.sendBatch(t, "1", deliver.Batch{Tag: "s"}, ib.URL("/dead"), ib.URL("/alive"))
	b2.runDue(t)
	got := ib.requests()
	if len(got) != 1 || got[0].Path != "/alive" {
		t.Fatalf("requests %+v, want only /alive", got)
	}
	if skipped != "https://a.example/activities/1" {
		t.Fatalf("SkipIf saw activity %q", skipped)
	}
	st, _ := b2.d.Status(context.Background(), "s")
	if st != (driver.BatchStatus{Delivered: 1, Skipped: 1}) {
		t.Fatalf("status %+v", st)
	}
}

func TestOnSettledAwaitedBeforeLeavingQueue(t *testing.T) {
	t.Parallel()
	var b *bundle
	var pendingDuring []int
	b = setup(t, func(c *deliver.Config) {
		c.OnSettled = func(ctx context.Context, s deliver.Settlement) {
			st, _ := b.q.Status(ctx, s.Tag)
			pendingDuring = append(pendingDuring, st.Pending)
		}
	})
	ib := newInbox(t, b.clock, nil)
	b.sendBatch(t, "1", deliver.Batch{Tag: "x"}, ib.URL("/inbox"))
	b.runDue(t)
	if !slices.Equal(pendingDuring, []int{1}) {
		t.Fatalf("pending during OnSettled %v, want [1]", pendingDuring)
	}
	if b.q.Len() != 0 {
		t.Fatal("settled job still queued")
	}
}

func TestDeleteQueuedAfterCreateNeverArrivesFirst(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ib, arrivals := orderingInbox(t, b.clock, 2)
	key := "https://a.example/notes/1"
	b.sendBatch(t, "create", deliver.Batch{OrderingKey: key}, ib.URL("/inbox"))
	if err := b.d.SendBatch(context.Background(), testKeyID, deleteActivity("delete"), []string{ib.URL("/inbox")}, deliver.Batch{OrderingKey: key}); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		b.runDue(t)
		b.clock.Advance(time.Hour)
	}
	if got := arrivals(); !slices.Equal(got, []string{"create", "create", "create", "delete"}) {
		t.Fatalf("arrival order %v, want the Create (retried) before the Delete", got)
	}
}

func TestLanes(t *testing.T) {
	t.Parallel()
	t.Run("PriorityAheadOfBigPost", func(t *testing.T) {
		t.Parallel()
		b := setup(t, func(c *deliver.Config) { c.Concurrency = 1 })
		ib := newInbox(t, b.clock, nil)
		var big []string
		for i := range 20 {
			big = append(big, ib.URL(fmt.Sprintf("/big/%d", i)))
		}
		b.send(t, "post", big...)
		b.sendBatch(t, "dm", deliver.Batch{Lane: driver.LanePriority}, ib.URL("/dm"))
		b.runDue(t)
		if got := ib.requests(); got[0].Path != "/dm" {
			t.Fatalf("first delivery %s, want the priority /dm", got[0].Path)
		}
	})
	t.Run("AutoPriorityForFewInboxes", func(t *testing.T) {
		t.Parallel()
		b := setup(t, func(c *deliver.Config) { c.Concurrency = 1; c.PriorityMaxInboxes = 2 })
		ib := newInbox(t, b.clock, nil)
		b.send(t, "post", ib.URL("/a"), ib.URL("/b"), ib.URL("/c"))
		b.send(t, "reply", ib.URL("/reply"))
		b.runDue(t)
		if got := ib.requests(); got[0].Path != "/reply" {
			t.Fatalf("first delivery %s, want /reply", got[0].Path)
		}
	})
	t.Run("LowPriorityLast", func(t *testing.T) {
		t.Parallel()
		b := setup(t, func(c *deliver.Config) { c.Concurrency = 1 })
		ib := newInbox(t, b.clock, nil)
		b.sendBatch(t, "backfill", deliver.Batch{Lane: driver.LaneLow}, ib.URL("/low"))
		b.send(t, "post", ib.URL("/normal"))
		b.runDue(t)
		got := ib.requests()
		if len(got) != 2 || got[0].Path != "/normal" || got[1].Path != "/low" {
			t.Fatalf("order %+v, want /normal then /low", got)
		}
	})
}

func TestBreakerHoldsAfterThreshold(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *deliver.Config) {
		c.Breaker = &deliver.BreakerConfig{Threshold: 3, CoolOff: 10 * time.Minute}
		c.Concurrency = 1
	})
	ib := newInbox(t, b.clock, status(503))
	for i := range 4 {
		b.send(t, strconv.Itoa(i), ib.URL(fmt.Sprintf("/inbox/%d", i)))
	}
	b.runDue(t)
	if n := len(ib.requests()); n != 3 {
		t.Fatalf("%d requests reached the host, want 3 before the breaker opened", n)
	}
	atts := b.rec.Attempts()
	held := atts[len(atts)-1]
	var derr *deliver.DeliveryError
	if held.Outcome != deliver.AttemptHeld || !errors.As(held.Err, &derr) || derr.Outcome != deliver.AttemptHeld || derr.Until.IsZero() {
		t.Fatalf("4th attempt %+v, want held with Until", held)
	}
	if held.Number != 1 {
		t.Fatalf("held attempt numbered %d", held.Number)
	}
	// A held delivery waits for the cool-off (10 min), not the policy's 30 s.
	b.clock.Advance(5 * time.Minute)
	b.runDue(t)
	for _, a := range b.rec.Attempts() {
		if strings.HasSuffix(a.Inbox, "/inbox/3") && a.Number > 1 {
			t.Fatalf("held delivery retried before the cool-off ended: %+v", a)
		}
	}
	if n := len(ib.requests()); n != 3 {
		t.Fatalf("%d requests reached an open breaker's host", n)
	}
}

func TestHeldDeliveryCountsAsAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *deliver.Config) {
		c.Breaker = &deliver.BreakerConfig{Threshold: 1, CoolOff: time.Hour}
		c.Concurrency = 1
	})
	ib := newInbox(t, b.clock, status(503))
	b.send(t, "open", ib.URL("/a"))
	b.runDue(t) // opens the breaker
	b.sendBatch(t, "held", deliver.Batch{MaxAttempts: 2}, ib.URL("/b"))
	b.runDue(t) // held: attempt 1
	b.clock.Advance(30 * time.Minute)
	b.runDue(t) // nothing due: the held one waits for the cool-off
	b.clock.Advance(30 * time.Minute)
	// At the cool-off's end the /a retry and /b compete; /a was due first.
	b.runDue(t)
	var bAtts []deliver.Attempt
	for _, a := range b.rec.Attempts() {
		if strings.HasSuffix(a.Inbox, "/b") {
			bAtts = append(bAtts, a)
		}
	}
	if len(bAtts) != 2 || bAtts[0].Outcome != deliver.AttemptHeld || bAtts[1].Number != 2 {
		t.Fatalf("attempts to /b: %+v, want held then attempt 2", bAtts)
	}
	var bSettled []deliver.Settlement
	for _, s := range b.rec.Settled() {
		if strings.HasSuffix(s.Inbox, "/b") {
			bSettled = append(bSettled, s)
		}
	}
	if len(bSettled) != 1 || bSettled[0].Result != driver.ResultGaveUp || bSettled[0].Attempts != 2 {
		t.Fatalf("/b settled %+v, want given up after 2 attempts, one of them held", bSettled)
	}
	for _, r := range ib.requests() {
		if r.Path == "/b" {
			t.Fatal("a held delivery reached the host")
		}
	}
}

func TestBreakerOneProbeAtATime(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *deliver.Config) {
		c.Breaker = &deliver.BreakerConfig{Threshold: 2, CoolOff: time.Minute}
		c.Concurrency = 8
	})
	var fail sync.Map
	fail.Store("on", true)
	ib := newInbox(t, b.clock, func(*http.Request, int) (int, http.Header) {
		if v, _ := fail.Load("on"); v == true {
			return 503, nil
		}
		return 202, nil
	})
	b.send(t, "a", ib.URL("/a"))
	b.send(t, "b", ib.URL("/b"))
	b.runDue(t)
	before := len(ib.requests())
	for i := range 6 {
		b.send(t, strconv.Itoa(i), ib.URL(fmt.Sprintf("/q/%d", i)))
	}
	b.clock.Advance(time.Minute)
	fail.Store("on", false)
	// Hold the probe at the inbox until every other delivery was answered,
	// so a quick probe cannot close the breaker before the rest ask.
	release := ib.hold(t)
	done := make(chan struct{})
	go func() { b.runDue(t); close(done) }()
	waitFor(t, func() bool {
		held := 0
		for _, a := range b.rec.Attempts() {
			if a.Outcome == deliver.AttemptHeld {
				held++
			}
		}
		return held == 7
	})
	release()
	<-done
	probes := 0
	for _, a := range b.rec.Attempts() {
		if a.Probe {
			probes++
		}
	}
	if sent := len(ib.requests()) - before; sent != 1 || probes != 1 {
		t.Fatalf("%d sent, %d probes after the cool-off; want exactly one probe", sent, probes)
	}
	// The probe succeeded: the breaker is closed and the held ones go.
	b.clock.Advance(time.Minute)
	b.runDue(t)
	if n := len(ib.requests()); n != 2+8 {
		t.Fatalf("%d requests, want all 8 once the probe closed the breaker (plus 2)", n)
	}
}

func TestBreakerProbeFailureReopens(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *deliver.Config) {
		c.Breaker = &deliver.BreakerConfig{Threshold: 1, CoolOff: time.Minute}
		c.Concurrency = 1
		c.Retry = deliver.CustomRetry(func(int) (time.Duration, bool) { return time.Second, true })
	})
	ib := newInbox(t, b.clock, status(503))
	b.send(t, "a", ib.URL("/a"))
	b.runDue(t) // opens
	b.clock.Advance(time.Minute)
	b.runDue(t) // probe fails: reopens for a minute
	if n := len(ib.requests()); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
	b.clock.Advance(30 * time.Second)
	b.runDue(t)
	if n := len(ib.requests()); n != 2 {
		t.Fatalf("sent during the second cool-off")
	}
}

func TestBreakerPerInboxAndOff(t *testing.T) {
	t.Parallel()
	t.Run("PerInbox", func(t *testing.T) {
		t.Parallel()
		b := setup(t, func(c *deliver.Config) {
			c.Breaker = &deliver.BreakerConfig{Threshold: 1, CoolOff: time.Hour, PerInbox: true}
			c.Concurrency = 1
		})
		ib := newInbox(t, b.clock, func(r *http.Request, _ int) (int, http.Header) {
			if r.URL.Path == "/bad" {
				return 503, nil
			}
			return 202, nil
		})
		b.send(t, "1", ib.URL("/bad"))
		b.runDue(t)
		b.send(t, "2", ib.URL("/good"))
		b.runDue(t)
		if got := ib.requests(); len(got) != 2 || got[1].Path != "/good" {
			t.Fatalf("per-inbox breaker held another inbox on the host: %+v", got)
		}
	})
	t.Run("DisableBreakerOff", func(t *testing.T) {
		t.Parallel()
		b := setup(t, func(c *deliver.Config) { c.DisableBreaker = true; c.Concurrency = 1 })
		ib := newInbox(t, b.clock, status(503))
		for i := range 15 {
			b.send(t, strconv.Itoa(i), ib.URL(fmt.Sprintf("/%d", i)))
		}
		b.runDue(t)
		if n := len(ib.requests()); n != 15 {
			t.Fatalf("%d requests with the breaker off, want 15", n)
		}
	})
}

func TestPerHostConcurrency(t *testing.T) {
	t.Parallel()
	t.Run("DefaultTwo", func(t *testing.T) {
		t.Parallel()
		b := setup(t, func(c *deliver.Config) { c.Concurrency = 8 })
		ib := newInbox(t, b.clock, nil)
		release := ib.hold(t)
		var inboxes []string
		for i := range 8 {
			inboxes = append(inboxes, ib.URL(fmt.Sprintf("/%d", i)))
		}
		b.send(t, "1", inboxes...)
		done := make(chan struct{})
		go func() { b.runDue(t); close(done) }()
		<-ib.entered
		<-ib.entered
		release()
		<-done
		if p := ib.peak.Load(); p != deliver.PerHostDefault {
			t.Fatalf("peak %d in flight to one host, want %d", p, deliver.PerHostDefault)
		}
	})
	t.Run("SharedAcrossDeliverers", func(t *testing.T) {
		t.Parallel()
		shared := deliver.NewHostLimiter(1)
		b1 := setup(t, func(c *deliver.Config) { c.HostLimiter = shared; c.Concurrency = 4 })
		b2 := setup(t, func(c *deliver.Config) { c.HostLimiter = shared; c.Concurrency = 4 })
		ib := newInbox(t, b1.clock, nil)
		release := ib.hold(t)
		b1.send(t, "1", ib.URL("/a1"), ib.URL("/a2"), ib.URL("/a3"))
		b2.send(t, "2", ib.URL("/b1"), ib.URL("/b2"), ib.URL("/b3"))
		var wg sync.WaitGroup
		wg.Go(func() { b1.runDue(t) })
		wg.Go(func() { b2.runDue(t) })
		<-ib.entered
		release()
		wg.Wait()
		if p := ib.peak.Load(); p != 1 {
			t.Fatalf("peak %d in flight across two deliverers sharing a limit of 1", p)
		}
		if n := len(ib.requests()); n != 6 {
			t.Fatalf("%d delivered, want 6", n)
		}
	})
}

func TestSchemeFallbackAndMemory(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *deliver.Config) { c.Concurrency, c.FirstScheme = 1, sig.SchemeCavage })
	// This inbox verifies only RFC 9421, refusing cavage with 401.
	ib := newInbox(t, b.clock, func(r *http.Request, _ int) (int, http.Header) {
		if r.Header.Get("Signature-Input") == "" {
			return 401, nil
		}
		return 202, nil
	})
	b.send(t, "1", ib.URL("/inbox"))
	b.runDue(t)
	b.send(t, "2", ib.URL("/inbox"))
	b.runDue(t)
	got := ib.requests()
	var schemes []sig.Scheme
	for _, r := range got {
		schemes = append(schemes, r.Scheme)
	}
	want := []sig.Scheme{sig.SchemeCavage, sig.SchemeRFC9421, sig.SchemeRFC9421}
	if !slices.Equal(schemes, want) {
		t.Fatalf("schemes %v, want cavage refused, RFC 9421, then RFC 9421 remembered (%v)", schemes, got[1].VerifyErr)
	}
	atts := b.rec.Attempts()
	if len(atts) != 2 || atts[0].Scheme != sig.SchemeRFC9421 || atts[0].Outcome != deliver.AttemptDelivered {
		t.Fatalf("attempts %+v: the fallback is part of one attempt", atts)
	}
}

func TestSchemeFallbackOnceOnly(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ib := newInbox(t, b.clock, status(400))
	b.send(t, "1", ib.URL("/inbox"))
	b.runDue(t)
	if n := len(ib.requests()); n != 2 {
		t.Fatalf("%d requests, want the first and one fallback", n)
	}
	if f := b.rec.Failures(); len(f) != 1 || f[0].StatusCode != 400 {
		t.Fatalf("failures %+v", f)
	}
}

type followers map[string]colsync.Followers

func (f followers) FollowersOn(_ context.Context, actorID, origin string) (colsync.Followers, error) {
	return f[actorID], nil
}

func TestCollectionSynchronizationHeader(t *testing.T) {
	t.Parallel()
	var b *bundle
	var ib *inbox
	b = setup(t, func(c *deliver.Config) {
		c.Followers = followers{testActor: {
			CollectionID: testActor + "/followers",
			URL:          testActor + "/followers_synchronization",
			IDs:          []string{"http://127.0.0.1:1/users/x"}, // replaced below
		}}
	})
	ib = newInbox(t, b.clock, nil)
	origin, _ := colsync.Origin(ib.URL("/"))
	local := []string{origin + "/users/bob", origin + "/users/carol"}
	f := b.cfg.Followers.(followers)
	f[testActor] = colsync.Followers{CollectionID: testActor + "/followers", URL: testActor + "/followers_synchronization",
		IDs: append(local, "https://elsewhere.example/users/dan")}
	b.sendBatch(t, "1", deliver.Batch{SynchronizeCollection: true}, ib.URL("/inbox"))
	b.send(t, "2", ib.URL("/inbox"))
	b.runDue(t)
	got := ib.requests()
	var withHeader []string
	for _, r := range got {
		if r.Sync != "" {
			withHeader = append(withHeader, r.Sync)
		}
	}
	if len(withHeader) != 1 {
		t.Fatalf("%d requests carried the header, want only the synchronized batch's", len(withHeader))
	}
	h, err := colsync.ParseHeader(withHeader[0])
	if err != nil {
		t.Fatal(err)
	}
	if h.CollectionID != testActor+"/followers" || h.Digest != colsync.Digest(local) {
		t.Fatalf("header %+v, want digest over the inbox's server's followers only", h)
	}
}

// refusedResolver resolves every name to TEST-NET-1, which the guard
// refuses at dial time: deliveries are signed but never touch the network.
type refusedResolver struct{}

func (refusedResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("192.0.2.1")}, nil
}

func TestCachingSenderKeysLoadsOnceFor10000Inboxes(t *testing.T) {
	t.Parallel()
	inner := &keys{}
	cached := deliver.NewCachingSenderKeys(inner, nil)
	c, err := client.New(&client.Config{Resolver: refusedResolver{}})
	if err != nil {
		t.Fatal(err)
	}
	var refused atomic.Int64
	d, err := deliver.New(&deliver.MemoryQueue{}, cached, c, &deliver.Config{
		Concurrency: 64,
		OnFailure: func(_ context.Context, f deliver.Failure) {
			if errors.Is(f.Err, client.ErrBlocked) {
				refused.Add(1)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var inboxes []string
	for i := range 10_000 {
		inboxes = append(inboxes, fmt.Sprintf("https://h%d.example/users/%d/inbox", i%100, i))
	}
	if err := d.Send(context.Background(), testKeyID, activity("1"), inboxes); err != nil {
		t.Fatal(err)
	}
	n, err := d.RunDue(context.Background())
	if err != nil || n != 10_000 {
		t.Fatalf("RunDue = %d, %v", n, err)
	}
	if refused.Load() != 10_000 {
		t.Fatalf("%d deliveries reached the guard, want 10,000", refused.Load())
	}
	if l := inner.loads.Load(); l != 1 {
		t.Fatalf("key loaded %d times, want once", l)
	}
}

func TestDropQueued(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ib := newInbox(t, b.clock, nil)
	b.send(t, "1", ib.URL("/a"), ib.URL("/b"))
	b.send(t, "2", ib.URL("/a"))
	n, err := b.d.Drop(context.Background(), driver.DropFilter{ActivityID: "https://a.example/activities/1"})
	if err != nil || n != 2 {
		t.Fatalf("Drop = %d, %v", n, err)
	}
	b.runDue(t)
	if got := ib.requests(); len(got) != 1 || !strings.Contains(got[0].Body, "activities/2") {
		t.Fatalf("requests %+v, want only activity 2", got)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	c := testClient(t)
	for _, tc := range []struct {
		name string
		q    driver.Queue
		k    deliver.SenderKeys
		cfg  *deliver.Config
	}{
		{"NoQueue", nil, &keys{}, nil},
		{"NoKeys", &deliver.MemoryQueue{}, nil, nil},
		{"BadScheme", &deliver.MemoryQueue{}, &keys{}, &deliver.Config{FirstScheme: 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := deliver.New(tc.q, tc.k, c, tc.cfg); !errors.Is(err, deliver.ErrInvalidConfig) {
				t.Fatalf("New: %v, want ErrInvalidConfig", err)
			}
		})
	}
}

// waitFor polls cond, failing the test after a generous while.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 1000 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition not reached in 10 s")
}
