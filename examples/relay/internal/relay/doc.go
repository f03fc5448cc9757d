// Package relay is the relay's ActivityPub side: the relay actor, WebFinger,
// NodeInfo, a signature-checking inbox, subscriptions (Mastodon's Follow of
// Public and LitePub's Follow of the actor), fan-out through a deliverer,
// per-host delivery health, and the operator status page, which reads breaker
// state from the deliverer's breaker store through BreakerLights.
//
//	r, err := relay.New(&relay.Config{PublicURL: "https://relay.example", Key: key,
//		Store: subscribers, Sender: deliverer, Lookup: fetcher, AdminToken: token})
//	http.ListenAndServe(":8080", r.Handler())
package relay
