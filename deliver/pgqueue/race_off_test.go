//go:build !race

package pgqueue_test

const raceEnabled = false
