// Package fedsim is a simulated fediverse for tests and benchmarks: one
// loopback listener plays any number of hosts, told apart by the Host
// header, each answering as its Profile says: healthy after a latency (with
// jitter), a tarpit that accepts and reads a request and never answers, slow,
// flaky (500 with a probability), refusing (closes the connection at once),
// rate limiting (429 with Retry-After), or gone (410).
//
// Point a client at it with Resolver, which sends every name to 127.0.0.1,
// and build inbox URLs with URL. The simulation counts what each host
// received and answered, and with Config.Record keeps every request (path,
// signature scheme, when it arrived and was answered, with what), so a test
// can assert who got what and when; Connections counts the connections it
// accepted, to assert a client kept them alive.
//
//	sim, _ := fedsim.New(&fedsim.Config{Default: fedsim.Healthy(100*time.Millisecond, 20*time.Millisecond)})
//	defer sim.Close()
//	sim.SetHost("down.example", fedsim.Tarpit())
//	c, _ := client.New(&client.Config{Resolver: sim.Resolver(), AllowPrivate: fedsim.Loopback})
//	inbox := sim.URL("down.example", "/inbox")
//
// It is for loopback only: it never dials out, and its listener binds
// 127.0.0.1.
package fedsim
