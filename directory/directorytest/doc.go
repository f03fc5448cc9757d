// Package directorytest provides a faithful in-memory Activity-Relay
// Directory for tests: an http.Handler that enforces the server side of the
// lifecycle protocol v1-v3 as the Directory does (strict bodies, canonical
// identities, RFC 9421 signature with the per-version tag, time window,
// replay set, enrollment, suspension, source and per-actor rate limits with
// Retry-After, 409 relay_not_registered, status schemas 2, 3 and 4).
//
// It answers as the real server was seen to, in its order (docs/HANDLERS.md
// of the Directory): method (405 JSON with Allow: POST); lifecycle switched
// off (503 lifecycle_unavailable before any verification); the per-source,
// per-operation bucket (burst 60, 1/s, Retry-After: 1); the body (413);
// target, version (a body without protocol_version, such as `{}`, is 400
// unsupported_protocol_version), operation and identity (400); Host,
// Content-Type (anything but exactly application/json is 401, not 400),
// digest and signature (401); replay (409); the per-actor bucket (burst 10,
// 1/min); state, where a heartbeat finds the missing registration (409)
// before the suspension (403). Bodies keep the fixtures' key order, errors
// carry fixed plausible messages (Message), and every response carries the
// deny-by-default ContentSecurityPolicy, nosniff and no-referrer; JSON ones
// no-store. POST /v1/status is the router's 405 text/plain without
// Cache-Control. The status document reports the public listing as
// configured (off by default) and lifecycle_enabled false when the lifecycle
// is switched off. The tests in realserver_test.go name each of these.
//
// Key resolution, which a real Directory does by fetching the relay actor
// over HTTPS, is replaced by a table of public keys (Config.Keys, AddKey).
//
// Usage, in-process (no sockets; works inside testing/synctest):
//
//	d := directorytest.New(&directorytest.Config{Keys: map[string]crypto.PublicKey{keyID: pub}, EnrollmentOpen: true})
//	c, _ := directory.New(key, &directory.Config{..., HTTP: d.Doer(), Directories: []directory.Entry{{Origin: d.Origin(), Enabled: true}}})
//
// or over TLS on loopback through the guarded client:
//
//	hc := d.StartTLS(t) // origin becomes https://directory.example:<port>
//	c, _ := directory.New(key, &directory.Config{..., HTTP: hc})
package directorytest
