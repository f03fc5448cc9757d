// Package deliver sends activities to inboxes: queued, signed afresh on
// every attempt, retried, ordered and guarded by a circuit breaker.
//
// The queue and breaker state live behind two small interfaces, Queue and
// BreakerStore, with in-memory defaults (MemoryQueue, MemoryBreakerStore)
// here and durable backends in subpackages; every implementation passes the
// suites in deliver/delivertest.
package deliver
