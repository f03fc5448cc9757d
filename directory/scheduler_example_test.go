package directory_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/redisstate"
)

func schedExampleClient() *directory.Client {
	key, _ := rsa.GenerateKey(rand.Reader, 2048) // the relay actor's key in real use
	c, err := directory.New(key, &directory.Config{
		Actor: "https://relay.example/actor", PublicBaseURL: "https://relay.example",
		Directories: []directory.Entry{{Origin: "https://directory.example", Enabled: true}},
	})
	if err != nil {
		panic(err)
	}
	return c
}

// The relay's server process (never its workers) runs the scheduler when
// its regular YAML configuration sets DIRECTORY_SCHEDULER_ENABLED: true.
func ExampleNewScheduler() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	store, _ := redisstate.New(rdb, nil)
	sched, err := directory.NewScheduler(schedExampleClient(), store, &directory.SchedulerConfig{
		ConfigFile: "/etc/activity-relay/config.yml",
		Relay:      "https://relay.example/actor",
	})
	if err != nil {
		panic(err)
	}
	// SIGINT/SIGTERM end Run, which releases any lease it holds.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go sched.Run(ctx) // never blocks startup
	<-ctx.Done()
}

// `relay directory heartbeat origin` while the scheduler is enabled.
func ExampleRunManual() {
	store := &directory.MemoryStateStore{}
	res, err := directory.RunManual(context.Background(), schedExampleClient(), directory.ManualHeartbeat,
		"https://directory.example", &directory.ManualOpts{Store: store, Relay: "https://relay.example/actor"})
	if errors.Is(err, directory.ErrLeaseHeld) {
		// RunManual waited ManualLeaseWaitDefault for the scheduler first.
		fmt.Println("the scheduler is still working on this Directory; try again in a minute")
		return
	}
	fmt.Println(res, err)
}

// `relay directory unregister origin --remove`.
func ExampleUnregister() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	store, _ := redisstate.New(rdb, nil)
	rep, err := directory.Unregister(context.Background(), schedExampleClient(), "https://directory.example", &directory.UnregisterOpts{
		ConfigFile: "/etc/activity-relay/config.yml",
		Store:      store, // whenever REDIS_URL is configured, gate on or off
		Remove:     true,
	})
	if errors.Is(err, directory.ErrUnregisterPending) {
		fmt.Println(rep.State, rep.Guidance)
		return
	}
	fmt.Println(rep, err)
}

// `relay directory status` without an origin.
func ExampleLocalStatus() {
	entries := []directory.Entry{
		{Origin: "https://directory.example", Enabled: true},
		{Origin: "https://other.example"},
	}
	st, _ := directory.LocalStatus(context.Background(), entries, &directory.MemoryStateStore{}, time.Now())
	for _, s := range st {
		fmt.Println(s.Origin, s.State)
	}
	// Output:
	// https://directory.example configured
	// https://other.example disabled
}

func ExampleAcquireLease() {
	store := &directory.MemoryStateStore{}
	lease, err := directory.AcquireLease(context.Background(), store, "https://directory.example", nil)
	if err != nil {
		panic(err)
	}
	defer lease.Release()
	// Work under lease.Context() stops if ownership is lost; writes are fenced.
	err = lease.Save(lease.Context(), directory.StateRecord{State: directory.StateConfigured})
	_, again := directory.AcquireLease(context.Background(), store, "https://directory.example", nil)
	fmt.Println(err, errors.Is(again, directory.ErrLeaseHeld))
	// Output:
	// <nil> true
}

func ExampleHeartbeatJitter() {
	j := directory.HeartbeatJitter("https://relay.example/actor", "https://directory.example")
	fmt.Println(j >= 0 && j <= directory.HeartbeatJitterMax)
	// Output:
	// true
}

func ExampleRetryDelay() {
	// A 25-hour Retry-After is capped at 24 hours and beats the local backoff.
	fmt.Println(directory.RetryDelay("https://relay.example/actor", "https://directory.example", 1, 25*time.Hour))
	// Output:
	// 24h0m0s
}
