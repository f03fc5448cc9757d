// Package redisbreaker keeps the deliverer's circuit breakers in Redis, so
// every process delivering for one application shares one view of each
// destination, as Mastodon's Stoplights do.
//
// The Store is built from a redis.UniversalClient the caller owns (a single
// node, a cluster or a sentinel setup). Each light, a host or an inbox URL,
// is one hash under the key layout of the stoplight gem's Redis data store,
// behind a prefix of your own; admission, failure counting and the
// one-probe-at-a-time rule each run as one Lua script. Light and Lights
// read the stored state back for display (a status page, an admin
// command) as driver.BreakerLight, whose Color names it as stoplight does.
//
//	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
//	defer rdb.Close()
//	cfg := deliver.DefaultConfig()
//	store := redisbreaker.New(rdb, &redisbreaker.Config{KeyPrefix: "myapp:"})
//	cfg.Breaker.Store = store
//	cfg.Breaker.PerInbox = true // one light per inbox URL, as Mastodon names them
//	d, err := deliver.New(queue, keys, httpClient, cfg)
//
//	// On the status page, from any process:
//	lights, err := store.Lights(ctx)
//	for _, l := range lights {
//		fmt.Println(l.Name, l.Color(time.Now()), l.Failures, l.OpenUntil)
//	}
//
// Redis Cluster: each light is one key and each script names only that
// key, so every command stays in one hash slot; give New a
// redis.UniversalClient built from several addresses (a *redis.ClusterClient)
// and Lights scans every master. The conformance suite runs against a
// 3-master cluster in this package's tests.
//
// While Redis is away the breakers fail open: Admit and Record return
// ErrRedis, and the Deliverer sends anyway (logging the store's failure),
// so deliveries go on to every host, one whose light was open included,
// and their outcomes are not counted. Holding instead would stop all
// delivery for as long as Redis is down, for the sake of the few hosts
// that are down too. When Redis comes back with its data (an append-only
// file, or a replica promoted), the lights are as they were and an open one
// holds again; a Redis that restarts empty has forgotten them, and a host
// still failing opens its light again after Threshold more failures.
//
// Clocks: the scripts take the caller's now (the Deliverer's Config.Now)
// for every breaker rule: failures, the cool-off and the probe in flight
// are judged by it alone and never by the server's TIME. The server's
// clock times only a light's retention (PEXPIRE, a duration of at least
// twice the cool-off), so a caller clock far from the server's neither
// loses a light nor holds it for the wrong span.
package redisbreaker
