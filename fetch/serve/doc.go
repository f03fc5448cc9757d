// Package serve is the serving half of what fetch reads: actor documents,
// WebFinger, host-meta and NodeInfo, as fediverse servers publish them,
// and content negotiation for the URLs that are both a page and a
// document.
//
//	actor, _ := serve.NewActor(&serve.ActorOpts{
//		ID: "https://social.example/users/alice", Username: "alice",
//		Key: &serve.ActorKey{Public: key.Public()}, // publicKey, "#main-key"
//		SharedInbox: "https://social.example/inbox",
//	})
//	mux.Handle("GET /users/alice", actor) // application/activity+json
//	mux.Handle(serve.WebFingerPath, serve.WebFinger(func(ctx context.Context, res string) (*serve.Account, error) {
//		if user, ok := serve.AcctUser(res, "social.example"); ok && user == "alice" {
//			return &serve.Account{Subject: "acct:alice@social.example", Actor: actor.ID}, nil
//		}
//		return nil, nil // 404
//	}))
//	mux.Handle(serve.HostMetaPath, serve.HostMeta("https://social.example"))
//	ni := serve.NodeInfo("https://social.example", infoFunc)
//	mux.Handle(serve.NodeInfoWellKnownPath, ni)
//	mux.Handle(serve.NodeInfo21Path, ni)
//	mux.Handle(serve.NodeInfo20Path, ni)
//
// sig/inbox.WantsActivityPub tells an ActivityPub GET from a browser's, by
// the rule authorized fetch guards GETs by.
//
// Routes mounts actors, their inboxes and WebFinger in one call. For what
// a local actor sends, Actor.Activity and Actor.Note build activities
// (fresh ids, @context, public addressing) and an Outbox queues them
// through a Sender (a *deliver.Deliverer); Followers answers Follows with
// Accepts and lists the inboxes to post to:
//
//	out := &serve.Outbox{Actor: actor, Sender: deliverer}
//	followers := &serve.Followers{Outbox: out, Actors: fetcher}
//	in, _ := inbox.New(keys, followers.Receive(receive), nil)
//	mux, _ := serve.Routes(in, actor)
//	out.Send(ctx, actor.Activity("Create", actor.Note("<p>Hello</p>")), followers.Inboxes()...)
package serve
