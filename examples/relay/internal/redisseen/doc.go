// Package redisseen is the relay's seen-set (relay.SeenSet) on Redis, shared
// by every server process of a deployment, so an activity id is relayed at
// most once within the window however many processes receive it. Each mark
// is one SET NX PX: atomic, and gone by itself when its window ends.
//
//	seen := redisseen.New(rdb, &redisseen.Config{KeyPrefix: "fedkit-relay:seen:"})
//	r, err := relay.New(&relay.Config{ /* ... */ Seen: seen})
package redisseen
