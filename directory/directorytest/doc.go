// Package directorytest provides a faithful in-memory Activity-Relay
// Directory for tests: an http.Handler that enforces the server side of the
// lifecycle protocol v1-v3 as the Directory does (strict bodies, canonical
// identities, RFC 9421 signature with the per-version tag, time window,
// replay set, enrollment, suspension, per-actor rate limit with
// Retry-After, 409 relay_not_registered, status schemas 2, 3 and 4).
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
