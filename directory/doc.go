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
//     unspecified and multicast refused, also inside IPv4-compatible, NAT64
//     and 6to4 addresses; everything else allowed, private split DNS and
//     NAT64 included), no redirects, a 16 KiB body cap, compression off, exact
//     application/json and strict JSON. Errors are closed: *ResponseError
//     (code, status, Retry-After), *InvalidResponseError (a Reason) or
//     *TransportError; no remote text survives. ClassOf says whether to
//     retry. A status document reporting lifecycle off stops a negotiated
//     call before any signed request (*LifecycleOffError).
//   - State: the local status vocabulary (State: configured, registered,
//     heartbeat-current, retrying, disabled, unregister-pending), derived
//     for each entry by LocalState and LocalStatus.
//
// Scheduler, state and unregister: a Scheduler (NewScheduler, then Run in
// its own goroutine of the relay's server process, never its workers) keeps
// registrations healthy. It re-reads the YAML file at least once a minute
// (entries, gate and DIRECTORY_PROFILE, handed to the client) and sends
// nothing unless DIRECTORY_SCHEDULER_ENABLED is true there; each
// enabled entry gets one reconciliation at startup, a heartbeat every 24 h
// plus a stable jitter of up to 2 h, a register when the profile digest
// changes, and backoff from 30 s to 15 min (longer only for a Retry-After,
// capped at 24 h) after a retryable failure. Its state lives in a
// StateStore (MemoryStateStore for one process, package redisstate for
// replicas), one record and one renewable, fencing lease per Directory
// (AcquireLease). RunManual runs the operator's register, heartbeat and
// sync under the same lease, waiting briefly for a busy scheduler, and
// records their success so the scheduler does not repeat them. Unregister
// leaves a Directory durably: under the lease it disables the entry in the
// YAML file crash-safely (temporary file, fsync, backup, rename), records
// unregister-pending, and only then sends the signed request; if that
// fails the entry stays disabled and nothing re-registers it.
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
//	// In the server process, when the file enables the scheduler:
//	store, err := redisstate.New(rdb, nil) // or &directory.MemoryStateStore{} for one process
//	s, err := directory.NewScheduler(c, store,
//		&directory.SchedulerConfig{ConfigFile: "/etc/relay/config.yml", Relay: "https://relay.example/actor"})
//	go s.Run(ctx) // ctx ends on SIGINT/SIGTERM; the lease is released
//	// relay directory unregister https://directory.example:
//	rep, err := directory.Unregister(ctx, c, "https://directory.example",
//		&directory.UnregisterOpts{ConfigFile: "/etc/relay/config.yml", Store: store})
//
// # Seed conformance
//
// The rules of the Activity-Relay Directory client contract and where they
// live, including those a review against the contract and a run against the
// real Directory server (0.1.0-rc3) corrected:
//
//   - At most eight opt-in canonical origins; a disabled entry sends
//     nothing (ParseConfig, Client.entry). An entry written `enabled:` is
//     null, read as false; unregister treats it as already disabled.
//   - participation_mode accepts only open, restricted or closed (or
//     empty): anything else, a non-string included, is a configuration
//     error with its line; other invalid optional values are warnings.
//   - Transport and internal_error failures get at most three attempts
//     (MaxAttemptsDefault caps Config and CallOpts); Retry-After only with
//     429 and 503 internal_error, capped at 24 h; interactive calls wait
//     out at most 30 s. Every attempt is signed afresh.
//   - The dial guard refuses loopback, link-local, unspecified and
//     multicast targets and nothing else (AddressAllowed).
//   - A successful manual register, heartbeat or sync records its success
//     under the scheduler's lease (RunManual), and the scheduler compares
//     the stored digest with the profile it reads from the file on every
//     wake, so it neither duplicates nor undoes an operator's command made
//     from another process, and an edited profile registers without a
//     restart (SchedulerConfig.DisableProfileReload opts out).
//   - File-backed unregister disables the entry durably before any
//     traffic; a crash at any step is recovered by the next edit, which
//     removes stale temporaries. The environment-only acknowledgement
//     does not replace the durable edit: Unregister makes it whenever
//     UnregisterOpts.ConfigFile is set, and the relay refuses
//     --acknowledge-external-disable when a writable file backs the entry.
//
// # Telemetry
//
// Config.TracerProvider and MeterProvider and SchedulerConfig.TracerProvider
// and MeterProvider default to OpenTelemetry's global providers, no-ops until
// the application installs its own; this package uses the OpenTelemetry
// API only. Attribute names are listed in one place, internal/otelx.
//
// Spans:
//
//   - directory.register, directory.heartbeat, directory.unregister,
//     directory.sync (internal): one per Client call, with
//     fedkit.directory.operation, server.address, server.port, and on
//     return fedkit.directory.protocol_version, fedkit.directory.outcome,
//     fedkit.directory.requests, http.response.status_code of the final
//     request and fedkit.directory.reconciled after a 409
//     relay_not_registered. Sync's register is a child directory.register.
//   - GET (the status document, fedkit.directory.operation=status) and POST
//     (client): one per request, with http.request.method, url.full,
//     server.address, server.port, http.response.status_code,
//     http.request.resend_count on a retry and
//     fedkit.directory.protocol_version.
//   - directory.reconcile (internal): one per due scheduler
//     reconciliation, parent of the call span, with
//     fedkit.directory.operation, fedkit.directory.state (the state it left)
//     and, when it failed, fedkit.directory.diagnostic.
//
// A failed span has status Error and error.type: the Directory's error
// code (rate_limited, relay_not_registered, ...), invalid_response (with
// fedkit.directory.reason), lifecycle_off, timeout, canceled, blocked,
// transport, disabled, unknown_directory, unsupported_version, signing,
// invalid_origin or _OTHER. Nothing a Directory sent is copied into a span.
//
// Metrics: http.client.request.duration (the HTTP semantic conventions'
// histogram, in seconds, with their advised buckets) per request, by
// http.request.method, fedkit.directory.operation,
// http.response.status_code and error.type (never the origin: Status
// accepts any). And fedkit.directory.state, an int64 gauge observed from the
// scheduler's memory (no store read at collection): for every configured
// Directory (fedkit.directory.origin, at most MaxDirectories) one series
// per local State (fedkit.directory.state), 1 for the state it is in and 0
// for the other five. Disabled entries report disabled; while
// DIRECTORY_SCHEDULER_ENABLED is false, and after Run returns, nothing is
// reported.
//
// Package directorytest provides a fake Directory that answers as the real
// server was seen to, for tests.
package directory
