// Package xrpc serves the AppView's read API in XRPC style: getProfile,
// getPosts (an author feed with the author's view on every post) and
// resolveActor, each taking actor as a DID, a handle, name@host or
// @name@host. Errors are {"error": "...", "message": "..."}.
//
// Usage:
//
//	http.ListenAndServe(addr, xrpc.New(store, logger))
//
// Outcomes: a malformed actor is 400 InvalidRequest before any query; no
// match is 404 ActorNotFound; two case-insensitive name@host matches are
// 409 AmbiguousActor; a database failure is a logged 500, never a 404.
package xrpc
