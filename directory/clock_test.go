package directory_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/directorytest"
)

// TestClockSetOnce: the clock rule. A Scheduler given a clock hands it to
// the Client and MemoryStateStore it is given with none of their own, so
// a test sets time once: a Directory (the outside world, with a clock of
// its own) living in 2031 accepts the Client's Date, and the lease and
// record are on the same clock.
func TestClockSetOnce(t *testing.T) {
	t.Parallel()
	at := time.Date(2031, 6, 1, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return at }
	key := testKey(t)
	srv := directorytest.New(&directorytest.Config{EnrollmentOpen: true, Now: now})
	srv.AddKey(schedActor+"#main-key", &key.PublicKey)
	cl, err := directory.New(key, &directory.Config{
		Actor: schedActor, PublicBaseURL: schedBase,
		Directories: []directory.Entry{{Origin: schedOrigin, Enabled: true}},
		HTTP:        srv.Doer(),
	})
	if err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(t.TempDir(), "config.yml")
	if err := os.WriteFile(cfgFile, []byte(schedYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	store := &directory.MemoryStateStore{}
	s, err := directory.NewScheduler(cl, store, &directory.SchedulerConfig{ConfigFile: cfgFile, Relay: schedActor, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	s.Tick(context.Background())
	rec, err := store.Load(context.Background(), schedOrigin)
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != directory.StateRegistered || !rec.LastSuccess.Equal(at) {
		t.Fatalf("record %+v, want registered at %v", rec, at)
	}
	for _, r := range srv.Requests() {
		if d, err := time.Parse(time.RFC1123, r.Header.Get("Date")); err != nil || !d.Equal(at) {
			t.Fatalf("Date %q, want the Scheduler's %v", r.Header.Get("Date"), at)
		}
	}
}
