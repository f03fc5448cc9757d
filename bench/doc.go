// Package bench compares fedkit's Postgres queue with River on the same
// database. It is a module of its own, so River never enters fedkit's
// go.mod; run it with
//
//	cd bench && go test -run '^$' -bench . -benchtime=1x
package bench
