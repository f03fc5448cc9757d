// Package otelx is fedkit's one place for OpenTelemetry names: the
// attribute keys every package puts on its spans and metrics, the
// instrumentation scope, and the helper that turns a Config's providers
// into a tracer and a meter. It imports the OpenTelemetry API only, never
// the SDK or an exporter (deps_test.go enforces it for every library
// package): with no providers configured, OTel's global ones are used, and
// those are no-ops until the application installs its own.
//
// # Attribute names
//
// HTTP attributes follow OpenTelemetry's HTTP semantic conventions, so a
// dashboard built for any instrumented HTTP client reads fedkit's spans:
//
//	http.request.method         GET, POST
//	http.response.status_code   the final status code, when one arrived
//	http.request.resend_count   1 for the first retry, 2 for the second, ...
//	server.address, server.port the peer's host and port
//	url.full                    the request URL (spans only, never metrics)
//	error.type                  a closed, low-cardinality failure name
//
// ActivityPub attributes take the names Fedify already emits, so one
// dashboard serves both: activitypub.activity.id, activitypub.activity.type
// (Fedify writes the qualified type URIs, e.g.
// https://www.w3.org/ns/activitystreams#Create), activitypub.activity.to,
// activitypub.activity.cc, activitypub.activity.retries,
// activitypub.actor.id, activitypub.actor.type, activitypub.object.id,
// activitypub.object.type, activitypub.inboxes, activitypub.shared_inbox,
// http_signatures.key_id, http_signatures.algorithm,
// http_signatures.verified and webfinger.resource.
//
// What has no convention is namespaced fedkit.<package>.<name>: for
// example fedkit.directory.operation, fedkit.directory.state,
// fedkit.identity.refresh.reason. Metric names follow the same scheme
// (fedkit.directory.state, fedkit.identity.refreshes), except where a
// semantic convention names the metric: http.client.request.duration, in
// seconds, with the conventions' advised buckets.
//
// # Cardinality
//
// Metric attributes are closed vocabularies (an operation, an outcome, a
// reason code) or values the operator configured and bounded (at most
// eight Directory origins). URLs, DIDs, activity ids and hosts of peers
// never become metric attributes; they may appear on spans, which are
// sampled and not aggregated.
package otelx
