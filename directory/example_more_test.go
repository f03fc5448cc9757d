package directory_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/fedkit/fedkit/directory"
)

func ExampleAddressAllowed() {
	for _, a := range []string{"10.1.2.3", "203.0.113.7", "127.0.0.1", "169.254.169.254"} {
		fmt.Println(a, directory.AddressAllowed(netip.MustParseAddr(a)))
	}
	// Output:
	// 10.1.2.3 true
	// 203.0.113.7 true
	// 127.0.0.1 false
	// 169.254.169.254 false
}

func ExampleAuthority() {
	fmt.Println(directory.Authority("https://directory.example"))
	fmt.Println(directory.Authority("https://directory.example:8443"))
	// Output:
	// directory.example
	// directory.example:8443
}

func ExampleProfileFields() {
	fmt.Println(len(directory.ProfileFields()), directory.ProfileFields()[0], directory.ProfileFields()[11])
	// Output: 12 participation_mode notes
}

func ExampleRetryAfterOf() {
	err := error(&directory.ResponseError{Version: directory.V1, Operation: directory.OpHeartbeat,
		StatusCode: 429, Code: directory.CodeRateLimited, RetryAfter: 53 * time.Second})
	fmt.Println(directory.ClassOf(err), directory.RetryAfterOf(err))
	// Output: retryable 53s
}

func ExampleRetryBackoff() {
	relay, dir := "https://relay.example/actor", "https://directory.example"
	// From 30 s plus a stable positive jitter, doubling, capped at 15 min.
	fmt.Println(directory.RetryBackoff(relay, dir, 1) > directory.BackoffBase)
	fmt.Println(directory.RetryBackoff(relay, dir, 2) > 2*directory.BackoffBase)
	fmt.Println(directory.RetryBackoff(relay, dir, 10) == directory.BackoffCap)
	// Output:
	// true
	// true
	// true
}

func ExampleNextHeartbeatAfter() {
	done := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	next := directory.NextHeartbeatAfter(done, "https://relay.example/actor", "https://directory.example")
	d := next.Sub(done)
	fmt.Println(d >= directory.HeartbeatInterval, d <= directory.HeartbeatInterval+directory.HeartbeatJitterMax)
	// Output: true true
}

func ExampleLocalState() {
	now := time.Now()
	on := directory.Entry{Origin: "https://directory.example", Enabled: true}
	fmt.Println(directory.LocalState(on, directory.StateRecord{}, now))
	fmt.Println(directory.LocalState(on, directory.StateRecord{State: directory.StateRegistered, Registered: true,
		Operation: directory.OpHeartbeat, NextHeartbeat: now.Add(time.Hour)}, now))
	fmt.Println(directory.LocalState(on, directory.StateRecord{State: directory.StateUnregisterPending}, now))
	fmt.Println(directory.LocalState(directory.Entry{Origin: on.Origin}, directory.StateRecord{}, now))
	// Output:
	// configured
	// heartbeat-current
	// unregister-pending
	// disabled
}

func ExampleStates() {
	fmt.Println(directory.States())
	// Output: [configured registered heartbeat-current retrying disabled unregister-pending]
}

func ExampleStatus_Negotiate() {
	doc := `{"enrollment_open":true,"lifecycle_available":true,"lifecycle_enabled":true,"lifecycle_protocol_versions":[1,2],` +
		`"public_base_url":"https://directory.example","public_listing_available":true,"public_listing_enabled":true,` +
		`"schema_version":4,"service":"activity-relay-directory","version":"1.3.0"}`
	st, err := directory.ParseStatus([]byte(doc), "https://directory.example")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Negotiate(), st.Advertises(directory.V3))
	// Output: v2 false
}

func ExampleNewLeaseToken() {
	fmt.Println(len(directory.NewLeaseToken()))
	// Output: 32
}

// One pass by hand, as an application with its own loop would do: the
// first Tick is the startup pulse, which registers a new relay.
func ExampleScheduler_Tick() {
	c, d := exampleClient()
	dir, err := os.MkdirTemp("", "relay")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "config.yml")
	yaml := "DIRECTORIES:\n  - origin: " + d.Origin() + "\n    enabled: true\nDIRECTORY_SCHEDULER_ENABLED: true\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		log.Fatal(err)
	}
	store := &directory.MemoryStateStore{}
	s, err := directory.NewScheduler(c, store, &directory.SchedulerConfig{ConfigFile: cfg, Relay: "https://relay.example/actor"})
	if err != nil {
		log.Fatal(err)
	}
	next := s.Tick(context.Background())
	rec, _ := store.Load(context.Background(), d.Origin())
	fmt.Println(rec.State, rec.Operation, rec.Outcome, rec.Protocol, next.After(time.Now()))
	// Output: registered register created v3 true
}

func ExampleMemoryStateStore() {
	var store directory.MemoryStateStore // the zero value is ready; one process only
	ctx := context.Background()
	lease, err := directory.AcquireLease(ctx, &store, "https://directory.example", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Release()
	_, err = store.Acquire(ctx, "https://directory.example", time.Minute)
	fmt.Println(errors.Is(err, directory.ErrLeaseHeld))
	fmt.Println(lease.Save(ctx, directory.StateRecord{State: directory.StateConfigured}))
	// Output:
	// true
	// <nil>
}
