// Package redisstate is a directory.StateStore on Redis: one bounded state
// record and one renewable lease per canonical Directory origin, shared by
// every replica and one-off command of a relay.
//
// Keys carry the SHA-256 of the origin, never the origin, under a caller
// chosen prefix; the lease and state keys share a hash tag so each Lua
// script touches one Redis Cluster slot. The lease is a token set with NX
// and a TTL; renew, release and every state write are Lua scripts that first
// compare the caller's token, so a former owner can never overwrite a newer
// owner's state. Each write replaces the whole record and refreshes its
// 90-day retention. The record holds closed values, whole-second times, a
// bounded counter and a digest only.
//
// The caller owns the client:
//
//	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
//	store, err := redisstate.New(rdb, &redisstate.Config{KeyPrefix: "relay:directory:"})
//	sched, err := directory.NewScheduler(client, store, &directory.SchedulerConfig{
//		ConfigFile: "/etc/relay/config.yml", Relay: "https://relay.example/actor",
//	})
//	go sched.Run(ctx)
//
// Clocks: every time in the state record (last success, next attempt,
// backoff) is the scheduler's, stored as given and compared only by the
// scheduler with its own clock. The server's clock measures only durations:
// the lease TTL (SET NX PX, PEXPIRE) and the record's retention. No script
// reads TIME, and no stored time is compared with the server's.
package redisstate
