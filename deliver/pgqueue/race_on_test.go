//go:build race

package pgqueue_test

// raceEnabled: the race detector slows HTTP and SQL several times over.
const raceEnabled = true
