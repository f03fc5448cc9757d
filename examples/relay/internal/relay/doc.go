// Package relay is the relay's ActivityPub side: the relay actor, WebFinger,
// NodeInfo, a signature-checking inbox, subscriptions (Mastodon's Follow of
// Public and LitePub's Follow of the actor; the inbox must be on the actor's
// own server, and a server has one Mastodon-style subscription), fan-out
// through a deliverer (one delivery per server, never back to the server an
// activity came from), loop guards (a SeenSet of the activity and object ids
// relayed), a per-server rate limit (429 with Retry-After), per-host delivery
// health, and the operator status page, which reads breaker state from the
// deliverer's breaker store through BreakerLights.
//
//	r, err := relay.New(&relay.Config{PublicURL: "https://relay.example", Key: key,
//		Store: subscribers, Sender: deliverer, Lookup: fetcher, AdminToken: token,
//		Seen: redisseen.New(rdb, nil)}) // nil Seen: a MemorySeen of this process
//	http.ListenAndServe(":8080", r.Handler())
package relay
