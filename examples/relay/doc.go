// Command relay is fedkit's example ActivityPub relay: Mastodon and LitePub
// (Pleroma, Akkoma, Misskey) servers subscribe to it, and every public post
// one of them sends it is passed on to all the others.
//
// Run it locally in one command (embedded store, in-memory queue, no
// database server):
//
//	go run ./examples/relay -c examples/relay/config.example.yml
//
// Commands:
//
//	relay [-c FILE] [server]     HTTP (actor, WebFinger, NodeInfo, inbox, status page),
//	                             deliveries, and the Directory scheduler when enabled
//	relay [-c FILE] worker       deliveries only; needs POSTGRES_URL
//	relay -t | --test-config [-c FILE] [--strict]
//	relay [-c FILE] directory status [origin]
//	relay [-c FILE] directory register|heartbeat|sync origin
//	relay [-c FILE] directory unregister origin [--remove] [--acknowledge-external-disable]
//
// Exit codes: 0 success, 1 failed, 2 usage, 3 invalid configuration,
// 75 try again later (retryable Directory failure, lease held, unregister
// pending).
//
// How it is built from fedkit:
//
//   - every outgoing request goes through the guarded client (package client);
//   - the inbox verifies each request's signature, draft-cavage or RFC 9421
//     (sig.Verifier), with keys fetched through package fetch and cached;
//     the key's owner must be the activity's actor, or the answer is 401;
//   - Follow of the Public collection (Mastodon) or of the relay actor
//     (LitePub) is answered with an Accept, or kept pending under
//     MANUAL_APPROVAL; Undo Follow unsubscribes;
//   - public Create, Announce, Update, and any Delete or Move from a
//     subscriber go to every other subscriber through deliver.Deliverer:
//     forwarded as they came to Mastodon-style subscribers, Create and
//     Announce wrapped in the relay's Announce for LitePub ones, all with
//     the object's id as ordering key so a Delete never overtakes its Create;
//   - the deliverer's OnAttempt hook keeps per-host health for the status
//     page (/admin/status, /admin/status.json, behind ADMIN_TOKEN);
//   - subscribers live in an atomically rewritten JSON file by default, or in
//     Postgres with pgqueue as the durable queue (POSTGRES_URL); REDIS_URL
//     shares the circuit breakers (redisbreaker) and the Directory
//     scheduler's state (redisstate) between processes;
//   - the Directory commands and scheduler are package directory's.
package main
