package deliver_test

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/colsync"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/sig"
)

// appKeys stands for an application's key table.
type appKeys struct{}

func (appKeys) Key(ctx context.Context, keyID string) (crypto.Signer, error) { return testKey, nil }
func (appKeys) Gone(ctx context.Context, keyID string) (bool, error)         { return false, nil }

// countedKeys counts the loads that reach the key table.
type countedKeys struct {
	appKeys
	loads int
}

func (k *countedKeys) Key(ctx context.Context, keyID string) (crypto.Signer, error) {
	k.loads++
	return k.appKeys.Key(ctx, keyID)
}

func ExampleNew() {
	c, err := client.New(nil) // the guarded client
	if err != nil {
		log.Fatal(err)
	}
	cfg := deliver.DefaultConfig() // breaker on: 10 failures, 1 min
	cfg.Logger = slog.Default()
	cfg.OnFailure = func(ctx context.Context, f deliver.Failure) {
		log.Printf("%s refused %s for good: %d", f.Host, f.ActivityID, f.StatusCode)
	}
	d, err := deliver.New(&deliver.MemoryQueue{}, deliver.NewCachingSenderKeys(appKeys{}, nil), c, cfg)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go d.Run(ctx) // on stop, finishes what is in flight
}

func ExampleDeliverer_Send() {
	var d *deliver.Deliverer // from deliver.New
	ctx := context.Background()
	create := []byte(`{"id":"https://a.example/activities/1","type":"Create","actor":"https://a.example/users/alice","object":{}}`)
	inboxes := []string{"https://b.example/inbox", "https://c.example/users/bob/inbox"}
	if err := d.Send(ctx, "https://a.example/users/alice#main-key", create, inboxes); err != nil {
		log.Print(err)
	}
}

func ExampleDeliverer_SendBatch() {
	var d *deliver.Deliverer // from deliver.New
	ctx := context.Background()
	del := []byte(`{"id":"https://a.example/activities/2","type":"Delete","actor":"https://a.example/users/alice","object":"https://a.example/notes/1"}`)
	err := d.SendBatch(ctx, "https://a.example/users/alice#main-key", del, []string{"https://b.example/inbox"}, deliver.Batch{
		Tag:                   "delete-note-1",
		Deadline:              time.Now().Add(24 * time.Hour),
		OrderingKey:           "https://a.example/notes/1", // never overtakes the Create
		SynchronizeCollection: true,
	})
	if err != nil {
		log.Print(err)
	}
}

func ExampleDeliverer_Run() {
	var d *deliver.Deliverer // from deliver.New
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	// ... on SIGTERM:
	stop()
	<-done // in-flight deliveries finished (within ShutdownGrace); the rest stay queued
}

func ExampleDeliverer_RunDue() {
	var d *deliver.Deliverer // from deliver.New
	n, err := d.RunDue(context.Background())
	log.Printf("worked %d due deliveries: %v", n, err)
}

func ExampleDeliverer_Status() {
	var d *deliver.Deliverer // from deliver.New
	st, err := d.Status(context.Background(), "delete-note-1")
	if err == nil && st.Done() {
		log.Printf("delivered %d, failed %d, gave up %d, skipped %d", st.Delivered, st.Failed, st.GaveUp, st.Skipped)
	}
}

func ExampleDeliverer_Drop() {
	var d *deliver.Deliverer // from deliver.New
	// An account was deleted: stop sending what it queued.
	n, err := d.Drop(context.Background(), driver.DropFilter{ActorID: "https://a.example/users/alice"})
	log.Print(n, err)
}

func ExampleNewCachingSenderKeys() {
	table := &countedKeys{}
	keys := deliver.NewCachingSenderKeys(table, &deliver.CachingConfig{TTL: 10 * time.Minute})
	_, _ = keys.Key(context.Background(), "https://a.example/users/alice#main-key")
	_, _ = keys.Key(context.Background(), "https://a.example/users/alice#main-key")
	fmt.Println(table.loads)
	// Output: 1
}

func ExampleExponentialRetry() {
	p := deliver.ExponentialRetry(time.Minute, 10*time.Minute, 5)
	for failed := 1; ; failed++ {
		d, ok := p.Next(failed)
		if !ok {
			break
		}
		fmt.Println(d)
	}
	// Output:
	// 1m0s
	// 2m0s
	// 4m0s
	// 8m0s
}

func ExampleCustomRetry() {
	// GoToSocial's schedule: 8, 16, 32, 64, 128 s; 6 attempts.
	p := deliver.CustomRetry(func(failed int) (time.Duration, bool) {
		return 2 * time.Second << failed, failed < 6
	})
	d, _ := p.Next(1)
	fmt.Println(d)
	// Output: 4s
}

func ExampleMastodonRetry() {
	cfg := deliver.DefaultConfig()
	cfg.Retry = deliver.MastodonRetry()
	cfg.Permanent = deliver.MastodonPermanent
	cfg.PermanentIfSenderGone = []int{401}
	cfg.Breaker.PerInbox = true
	_ = cfg
}

func ExampleParseRetryAfter() {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	d1, _ := deliver.ParseRetryAfter("120", now)
	d2, _ := deliver.ParseRetryAfter("Fri, 01 May 2026 12:30:00 GMT", now)
	fmt.Println(d1, d2)
	// Output: 2m0s 30m0s
}

func ExampleNewHostLimiter() {
	shared := deliver.NewHostLimiter(4) // every tenant's deliverer in this process
	for range 3 {
		cfg := deliver.DefaultConfig()
		cfg.HostLimiter = shared
		_ = cfg // deliver.New(queue, keys, client, cfg)
	}
}

func ExampleConfig_schemes() {
	cfg := deliver.DefaultConfig()
	cfg.Schemes = sig.NewHostSchemes(50_000) // shareable across Deliverers and a fetch.Fetcher
	_ = cfg
}

func ExampleMemoryQueue() {
	q := &deliver.MemoryQueue{}
	_ = q.Enqueue(context.Background(), &driver.Envelope{
		KeyID: "https://a.example/users/alice#main-key", Body: []byte(`{}`),
		Inboxes: []string{"https://b.example/inbox", "https://c.example/inbox"}, EnqueuedAt: time.Now(),
	})
	fmt.Println(q.Len())
	// Output: 2
}

func ExampleMemoryQueue_Depth() {
	ctx := context.Background()
	q := &deliver.MemoryQueue{}
	_ = q.Enqueue(ctx, &driver.Envelope{
		Body: []byte(`{}`), Lane: driver.LanePriority, EnqueuedAt: time.Now(),
		Inboxes: []string{"https://b.example/inbox"},
	})
	_ = q.Enqueue(ctx, &driver.Envelope{
		Body: []byte(`{}`), EnqueuedAt: time.Now(),
		Inboxes: []string{"https://b.example/inbox", "https://c.example/inbox"},
	})
	depth := q.Depth() // for a status page; pgqueue's Queue.Depth means the same
	for _, lane := range []driver.Lane{driver.LanePriority, driver.LaneNormal, driver.LaneLow} {
		fmt.Println(lane, depth[lane])
	}
	// Output:
	// priority 1
	// normal 2
	// low 0
}

// followersTable stands for an application's follows table.
type followersTable struct{}

func (followersTable) FollowersOn(ctx context.Context, actorID, origin string) (colsync.Followers, error) {
	return colsync.Followers{
		CollectionID: actorID + "/followers",
		URL:          actorID + "/followers_synchronization",
		IDs:          []string{origin + "/users/bob"}, // SELECT ... WHERE uri LIKE origin || '/%'
	}, nil
}

func ExampleFollowersSource() {
	cfg := deliver.DefaultConfig()
	cfg.Followers = followersTable{}
	_ = cfg
}

func ExampleDeliveryError() {
	cfg := deliver.DefaultConfig()
	cfg.OnAttempt = func(ctx context.Context, a deliver.Attempt) {
		var derr *deliver.DeliveryError
		switch {
		case a.Err == nil:
			// delivered: the application may clear the host's failure record
		case a.Outcome == deliver.AttemptHeld && errors.As(a.Err, &derr):
			log.Printf("%s held by its breaker until %v", a.Host, derr.Until)
		case a.Outcome == deliver.AttemptFailed && errors.As(a.Err, &derr):
			log.Printf("%s failed (status %d, Retry-After %v), attempt %d; will retry", a.Host, derr.StatusCode, derr.RetryAfter, a.Number)
		case a.Outcome == deliver.AttemptRefused:
			log.Printf("%s refused it for good (status %d)", a.Host, a.StatusCode)
		}
	}
	_ = cfg
}

func ExampleMemoryBreakerStore_Lights() {
	ctx := context.Background()
	store := &deliver.MemoryBreakerStore{} // as set in BreakerConfig.Store
	rule := driver.BreakerRule{Threshold: 2, CoolOff: time.Minute}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, host := range []string{"down.example", "down.example", "flaky.example"} {
		_ = store.Record(ctx, host, false, false, now, rule)
	}
	lights := store.Lights() // for a status page: the troubled hosts
	for _, l := range lights {
		if l.OpenUntil.IsZero() {
			fmt.Printf("%s closed, %d failure(s) in a row\n", l.Name, l.Failures)
		} else {
			fmt.Printf("%s open until %s\n", l.Name, l.OpenUntil.Format(time.Kitchen))
		}
	}
	// Output:
	// down.example open until 12:01PM
	// flaky.example closed, 1 failure(s) in a row
}

func ExampleMemoryBreakerStore_Light() {
	store := &deliver.MemoryBreakerStore{}
	l := store.Light("b.example")
	fmt.Println(l.OpenUntil.IsZero(), l.Failures) // never failed: closed
	// Output: true 0
}

func ExampleMemoryBreakerStore() {
	// Deliverers sharing a store share their breakers (per host here).
	store := &deliver.MemoryBreakerStore{}
	for range 2 {
		cfg := deliver.DefaultConfig()
		cfg.Breaker = &deliver.BreakerConfig{Threshold: 5, CoolOff: 30 * time.Second, Store: store}
		_ = cfg
	}
}

func ExampleDefaultConfig() {
	cfg := deliver.DefaultConfig()
	fmt.Println(cfg.Breaker != nil)
	cfg.DisableBreaker = true // no breaker (a nil Breaker means the defaults)
	// Output: true
}

func ExampleDefaultPermanent() {
	fmt.Println(deliver.DefaultPermanent(401), deliver.DefaultPermanent(429), deliver.MastodonPermanent(401), deliver.MastodonPermanent(501))
	// Output: true false false true
}

func ExampleDeliverer_SendPortable() {
	var d *deliver.Deliverer // from deliver.New
	ctx := context.Background()
	// An activity with its eddsa-jcs-2022 proof attached (sig), to a
	// portable actor whose "gateways" the application read from the actor.
	create := []byte(`{"id":"https://a.example/activities/3","type":"Create","actor":"https://a.example/users/alice","object":{},"proof":{}}`)
	err := d.SendPortable(ctx, "https://a.example/users/alice#main-key", create, []deliver.PortableInbox{{
		Inbox:    "ap://did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2/actor/inbox",
		Gateways: []string{"https://gw1.example", "https://gw2.example"},
	}}, deliver.Batch{Tag: "portable-3"})
	if err != nil {
		log.Print(err)
	}
}

func ExampleGatewayInboxes() {
	urls, err := deliver.GatewayInboxes("ap://did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2/actor/inbox",
		[]string{"https://gw.example"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(urls[0])
	// Output: https://gw.example/.well-known/apgateway/did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2/actor/inbox
}

func ExampleMastodonPermanent() {
	// Mastodon retries a 401 (unless the sender is gone) and gives up on 501.
	for _, status := range []int{401, 410, 429, 501, 503} {
		fmt.Println(status, deliver.MastodonPermanent(status))
	}
	// Output:
	// 401 false
	// 410 true
	// 429 false
	// 501 true
	// 503 false
}

func ExampleHostLimiter_Acquire() {
	l := deliver.NewHostLimiter(1)
	release, err := l.Acquire(context.Background(), "b.example")
	if err != nil {
		log.Fatal(err)
	}
	_, ok := l.TryAcquire("b.example") // the host's one slot is taken
	fmt.Println(l.InFlight("b.example"), ok)
	release()
	fmt.Println(l.InFlight("b.example"))
	// Output:
	// 1 false
	// 0
}

func ExampleCachingSenderKeys_Forget() {
	table := &countedKeys{}
	keys := deliver.NewCachingSenderKeys(table, &deliver.CachingConfig{TTL: time.Hour})
	ctx := context.Background()
	_, _ = keys.Key(ctx, "https://a.example/users/alice#main-key")
	keys.Forget("https://a.example/users/alice#main-key") // rotated: load the new key next time
	_, _ = keys.Key(ctx, "https://a.example/users/alice#main-key")
	fmt.Println(table.loads)
	// Output: 2
}

func ExampleSingleKey() {
	key, _ := sig.LoadOrGenerateKey("actor.pem", sig.KeyRSA2048)
	c, _ := client.New(nil)
	d, _ := deliver.New(&deliver.MemoryQueue{}, deliver.SingleKey{KeyID: "https://social.example/actor#main-key", Signer: key}, c, nil)
	_ = d
}

func ExampleSenderKeysFunc() {
	keys := deliver.SenderKeysFunc(func(ctx context.Context, keyID string) (crypto.Signer, error) {
		return loadKeyFromMyTable(ctx, keyID)
	})
	c, _ := client.New(nil)
	d, _ := deliver.New(&deliver.MemoryQueue{}, deliver.NewCachingSenderKeys(keys, nil), c, nil)
	_ = d
}

func loadKeyFromMyTable(context.Context, string) (crypto.Signer, error) { return nil, nil }
