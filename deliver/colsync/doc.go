// Package colsync implements FEP-8fcf Collection-Synchronization as Mastodon
// does: the followers digest, and reading and writing the header.
//
// A sender writes the header on a delivery to one inbox; the deliver
// package does this for a batch sent with SynchronizeCollection:
//
//	origin, _ := colsync.Origin(inbox)
//	req.Header.Set(colsync.HeaderName, colsync.Followers{
//		CollectionID: "https://a.example/users/alice/followers",
//		URL:          "https://a.example/users/alice/followers_synchronization",
//		IDs:          followerIDs,
//	}.HeaderFor(origin).String())
//
// A receiver reads it, after checking the request's signature, and compares
// the digest with its own:
//
//	h, err := colsync.ParseHeader(req.Header.Get(colsync.HeaderName))
//	if err == nil && h.Digest != colsync.DigestOn(myOrigin, localFollowersOf(actor)) {
//		// walk h.URL, at most 10 pages, and reconcile (see the FEP)
//	}
//
// The digest is the XOR of the SHA-256 of each follower ID, as lower-case
// hex; no followers give EmptyDigest.
package colsync
