// Package directory is a client for Activity-Relay Directories: it
// registers a relay with, heartbeats to, synchronises its public profile
// with and unregisters it from any Directory, speaking lifecycle protocol
// v1, v2 and v3 exactly as the Directory servers accept it, and treating
// every Directory as potentially hostile.
//
// The pieces:
//
//   - Configuration: ParseConfig reads DIRECTORIES (at most eight opt-in
//     canonical HTTPS origins), DIRECTORY_SCHEDULER_ENABLED and
//     DIRECTORY_PROFILE from a relay's YAML file; LoadEnv reads the same
//     from the environment. Invalid optional profile values become
//     Warnings with their line and are left unset; LoadOpts.Strict turns
//     them into an error. Neither touches the network or any state.
//   - Profile: the 12-field descriptive profile, normalised (trimmed,
//     deduplicated, sorted lists; canonical HTTPS URLs; explicit empty
//     values), with a SHA-256 Digest for change detection.
//   - Client: Status reads and strictly validates the public status
//     document (schemas 2, 3 and 4) and negotiates the highest version
//     both sides support; Register, Heartbeat, Unregister and Sync send
//     RFC 9421-signed requests with the relay actor's RSA key, a fresh
//     nonce and signature on every attempt. Only a validated 409
//     relay_not_registered on heartbeat leads to one register and one
//     final heartbeat.
//   - Containment: requests go through the guarded client package with the
//     Directory address policy (ClientConfig: loopback, link-local,
//     unspecified and multicast refused, private ranges allowed for split
//     DNS), no redirects, a 16 KiB body cap, compression off, exact
//     application/json and strict JSON. Errors are closed: *ResponseError
//     (code, status, Retry-After), *InvalidResponseError (a Reason) or
//     *TransportError; no remote text survives. ClassOf says whether to
//     retry.
//   - State: the local status vocabulary (State) that a scheduler persists.
//     The optional Scheduler, its StateStore (MemoryStateStore here, Redis
//     in package redisstate) and the file-backed unregister build on the
//     Client; see their own documentation.
//
// Usage:
//
//	settings, warnings, err := directory.ParseConfig(yamlBytes, &directory.LoadOpts{Strict: strict})
//	for _, w := range warnings {
//		log.Print(w)
//	}
//	c, err := directory.New(actorKey, &directory.Config{
//		Actor:         "https://relay.example/actor",
//		PublicBaseURL: "https://relay.example",
//		Directories:   settings.Directories,
//		Profile:       settings.Profile,
//		Telemetry:     func(ctx context.Context) (int64, error) { return connectedSites(ctx) },
//	})
//	res, err := c.Sync(ctx, "https://directory.example", nil) // status, negotiate, register
//	res, err = c.Heartbeat(ctx, "https://directory.example", &directory.CallOpts{Version: res.Version})
//	switch directory.ClassOf(err) {
//	case directory.ClassRetryable:
//		// back off at least directory.RetryAfterOf(err)
//	case directory.ClassPermanent:
//		// record; try again at the next daily interval
//	}
//
// Package directorytest provides a faithful fake Directory for tests.
package directory
