package directory_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/directorytest"
)

// unregisterEnv is a registered relay with Redis state and a config file.
func unregisterEnv(t *testing.T) *schedEnv {
	t.Helper()
	store, _, _ := redisStore(t)
	e := newSchedEnv(t, store, directory.Profile{})
	e.scheduler(nil).Tick(context.Background()) // registered by the scheduler
	if r := e.record(); r.State != directory.StateRegistered {
		t.Fatalf("setup: %+v", r)
	}
	return e
}

func (e *schedEnv) readConfig() []byte {
	e.t.Helper()
	b, err := os.ReadFile(e.config)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

func TestUnregisterSuccessAndRemove(t *testing.T) {
	e := unregisterEnv(t)
	orig := e.readConfig()
	rep, err := directory.Unregister(context.Background(), e.lc, schedOrigin, &directory.UnregisterOpts{ConfigFile: e.config, Store: e.store, Remove: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.State != directory.StateDisabled || !rep.Edited || !rep.Removed || rep.Result.Outcome != directory.OutcomeRemoved {
		t.Fatalf("report %+v", rep)
	}
	if got := e.ops(); got[len(got)-1] != "v3 unregister" {
		t.Fatalf("requests = %q", got)
	}
	if r := e.record(); r.State != directory.StateDisabled || r.Registered {
		t.Fatalf("record %+v", r)
	}
	if bytes.Contains(e.readConfig(), []byte(schedOrigin)) {
		t.Fatalf("entry not removed:\n%s", e.readConfig())
	}
	bak, err := os.ReadFile(rep.Backup)
	if err != nil || !bytes.Equal(bak, orig) {
		t.Fatalf("backup is not the pre-disable original (%v)", err)
	}
	st, _ := directory.LocalStatus(context.Background(), []directory.Entry{{Origin: schedOrigin}}, e.store, time.Now())
	if st[0].State != directory.StateDisabled {
		t.Fatalf("status %v", st[0].State)
	}
}

func TestUnregisterRemoteFailureIsPending(t *testing.T) {
	e := unregisterEnv(t)
	// A long-running scheduler that started before the unregister, whose
	// view of the file may stay stale (an old bind-mounted inode).
	clock := &fakeClock{}
	stale := e.scheduler(&directory.SchedulerConfig{Now: clock.Now})
	stale.Tick(context.Background())
	clock.Advance(time.Hour)
	e.srv.Enqueue(directorytest.Reply{StatusCode: 503, Code: directory.CodeLifecycleUnavailable})
	rep, err := directory.Unregister(context.Background(), e.lc, schedOrigin, &directory.UnregisterOpts{ConfigFile: e.config, Store: e.store, Remove: true})
	if !errors.Is(err, directory.ErrUnregisterPending) {
		t.Fatalf("err = %v, want ErrUnregisterPending", err)
	}
	if rep.State != directory.StateUnregisterPending || rep.Removed || !strings.Contains(rep.Guidance, "re-run") {
		t.Fatalf("report %+v", rep)
	}
	cfg := e.readConfig()
	if !bytes.Contains(cfg, []byte("enabled: false")) || !bytes.Contains(cfg, []byte(schedOrigin)) {
		t.Fatalf("--remove ran before remote success, or entry not disabled:\n%s", cfg)
	}
	if r := e.record(); r.State != directory.StateUnregisterPending || r.Code != directory.CodeLifecycleUnavailable {
		t.Fatalf("record %+v", r)
	}
	st, _ := directory.LocalStatus(context.Background(), []directory.Entry{{Origin: schedOrigin}}, e.store, time.Now())
	if st[0].State != directory.StateUnregisterPending {
		t.Fatalf("status %v", st[0].State)
	}
	// A restarted scheduler reads the disabled file and never registers.
	n := len(e.ops())
	clock.Advance(time.Hour)
	fresh := e.scheduler(&directory.SchedulerConfig{Now: clock.Now})
	for range 3 {
		clock.Advance(30 * time.Hour)
		fresh.Tick(context.Background())
	}
	if got := e.ops(); len(got) != n {
		t.Fatalf("requests after restart: %q", got[n:])
	}
	// The stale scheduler still sees enabled: true, but the lease-fenced
	// suppression keeps it quiet; so does a restart that still reads the
	// stale file (a container restarted without being recreated).
	e.writeConfig(schedYAML)
	restarted := e.scheduler(&directory.SchedulerConfig{Now: clock.Now})
	for range 3 {
		clock.Advance(30 * time.Hour)
		stale.Tick(context.Background())
		restarted.Tick(context.Background())
	}
	if got := e.ops(); len(got) != n {
		t.Fatalf("stale or restarted scheduler sent %q", got[n:])
	}
}

// TestReenableAfterUnregister: after a successful unregister, persisting
// enabled: true and restarting the server registers again (the documented
// re-enable), while the scheduler that was running keeps quiet.
func TestReenableAfterUnregister(t *testing.T) {
	e := unregisterEnv(t)
	clock := &fakeClock{}
	running := e.scheduler(&directory.SchedulerConfig{Now: clock.Now})
	running.Tick(context.Background())
	clock.Advance(time.Hour)
	if _, err := directory.Unregister(context.Background(), e.lc, schedOrigin, &directory.UnregisterOpts{ConfigFile: e.config, Store: e.store}); err != nil {
		t.Fatal(err)
	}
	n := len(e.ops())
	e.writeConfig(schedYAML) // enabled: true again
	clock.Advance(30 * time.Hour)
	running.Tick(context.Background())
	if got := e.ops(); len(got) != n {
		t.Fatalf("running scheduler sent %q before a restart", got[n:])
	}
	clock.Advance(time.Hour)
	e.scheduler(&directory.SchedulerConfig{Now: clock.Now}).Tick(context.Background())
	if got := e.ops(); len(got) != n+1 || got[n] != "v3 register" {
		t.Fatalf("restart after re-enable sent %q, want one register", got[n:])
	}
	if r := e.record(); r.State != directory.StateRegistered {
		t.Fatalf("record %+v", r)
	}
}

func TestUnregisterStopsBeforeTraffic(t *testing.T) {
	for _, tc := range []struct {
		name string
		prep func(t *testing.T, e *schedEnv) *directory.UnregisterOpts
		want error
	}{
		{"LeaseHeld", func(t *testing.T, e *schedEnv) *directory.UnregisterOpts {
			if _, err := e.store.Acquire(context.Background(), schedOrigin, time.Minute); err != nil {
				t.Fatal(err)
			}
			return &directory.UnregisterOpts{ConfigFile: e.config, Store: e.store, Lease: &directory.LeaseOpts{Wait: -1}}
		}, directory.ErrLeaseHeld},
		{"StateInvalid", func(t *testing.T, e *schedEnv) *directory.UnregisterOpts {
			return &directory.UnregisterOpts{ConfigFile: e.config, Store: badLoadStore{e.store}}
		}, directory.ErrInvalidRecord},
		{"Symlink", func(t *testing.T, e *schedEnv) *directory.UnregisterOpts {
			link := e.config + ".link"
			if err := os.Symlink(e.config, link); err != nil {
				t.Fatal(err)
			}
			return &directory.UnregisterOpts{ConfigFile: link, Store: e.store}
		}, directory.ErrConfigSymlink},
		{"EnvOnlyWithoutAck", func(t *testing.T, e *schedEnv) *directory.UnregisterOpts {
			return &directory.UnregisterOpts{Store: e.store}
		}, directory.ErrAcknowledgementRequired},
		{"EnvOnlyRemove", func(t *testing.T, e *schedEnv) *directory.UnregisterOpts {
			return &directory.UnregisterOpts{Store: e.store, AcknowledgeExternalDisable: true, Remove: true}
		}, directory.ErrRemoveNeedsFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := unregisterEnv(t)
			orig, n := e.readConfig(), len(e.ops())
			_, err := directory.Unregister(context.Background(), e.lc, schedOrigin, tc.prep(t, e))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if len(e.ops()) != n {
				t.Fatalf("remote traffic despite the failure: %q", e.ops()[n:])
			}
			if !bytes.Equal(e.readConfig(), orig) {
				t.Fatal("config changed")
			}
		})
	}
}

// badLoadStore fails loads as a corrupt record would.
type badLoadStore struct{ directory.StateStore }

func (badLoadStore) Load(context.Context, string) (directory.StateRecord, error) {
	return directory.StateRecord{}, directory.ErrInvalidRecord
}

func TestUnregisterEnvironmentOnly(t *testing.T) {
	e := unregisterEnv(t)
	orig := e.readConfig()
	rep, err := directory.Unregister(context.Background(), e.lc, schedOrigin, &directory.UnregisterOpts{Store: e.store, AcknowledgeExternalDisable: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) == 0 || !strings.Contains(rep.Warnings[0], "before restart") || rep.Edited {
		t.Fatalf("report %+v", rep)
	}
	if !bytes.Equal(e.readConfig(), orig) {
		t.Fatal("environment-only unregister touched a file")
	}
}

// TestUnregisterCrashDuringEdit injects a crash at each YAML step: the
// config is whole (old or new), nothing reached the Directory, and a
// restarted scheduler never registers again.
func TestUnregisterCrashDuringEdit(t *testing.T) {
	for _, step := range []directory.EditStep{directory.EditBeforeTempWrite, directory.EditAfterTempWrite, directory.EditAfterBackup, directory.EditAfterRename} {
		t.Run(step.String(), func(t *testing.T) {
			e := unregisterEnv(t)
			orig, n := e.readConfig(), len(e.ops())
			crash := errors.New("crash")
			_, err := directory.Unregister(context.Background(), e.lc, schedOrigin, &directory.UnregisterOpts{
				ConfigFile: e.config, Store: e.store,
				EditHook: func(s directory.EditStep) error {
					if s == step {
						return crash
					}
					return nil
				},
			})
			if !errors.Is(err, crash) {
				t.Fatalf("err = %v", err)
			}
			cfg := e.readConfig()
			disabled := bytes.Contains(cfg, []byte("enabled: false"))
			if !bytes.Equal(cfg, orig) && !(disabled && len(cfg) == len(orig)+1) {
				t.Fatalf("partial config:\n%s", cfg)
			}
			if disabled != (step == directory.EditAfterRename) {
				t.Fatalf("disabled = %v after a crash at %v", disabled, step)
			}
			if len(e.ops()) != n {
				t.Fatalf("remote traffic after a crash: %q", e.ops()[n:])
			}
			// Restart: at most the normal heartbeat of a still-enabled
			// entry, never a registration.
			clock := &fakeClock{}
			s := e.scheduler(&directory.SchedulerConfig{Now: clock.Now})
			for range 2 {
				s.Tick(context.Background())
				clock.Advance(30 * time.Hour)
			}
			for _, op := range e.ops()[n:] {
				if op != "v3 heartbeat" {
					t.Fatalf("restart sent %q", e.ops()[n:])
				}
			}
			if disabled && len(e.ops()) != n {
				t.Fatalf("disabled entry got traffic: %q", e.ops()[n:])
			}
			// Re-running the command finishes the job.
			if _, err := directory.Unregister(context.Background(), e.lc, schedOrigin, &directory.UnregisterOpts{ConfigFile: e.config, Store: e.store}); err != nil {
				t.Fatal(err)
			}
			if got := e.ops(); got[len(got)-1] != "v3 unregister" || slices.Contains(got[n:], "v3 register") {
				t.Fatalf("requests = %q", got[n:])
			}
		})
	}
}

// failSaveStore refuses writes as a lost lease would.
type failSaveStore struct{ directory.StateStore }

func (failSaveStore) Save(context.Context, string, string, directory.StateRecord) error {
	return directory.ErrLeaseLost
}

func TestUnregisterSuppressionWriteFailureSendsNothing(t *testing.T) {
	e := unregisterEnv(t)
	n := len(e.ops())
	_, err := directory.Unregister(context.Background(), e.lc, schedOrigin, &directory.UnregisterOpts{ConfigFile: e.config, Store: failSaveStore{e.store}})
	if !errors.Is(err, directory.ErrLeaseLost) {
		t.Fatalf("err = %v, want ErrLeaseLost", err)
	}
	if len(e.ops()) != n {
		t.Fatalf("remote traffic without a recorded suppression: %q", e.ops()[n:])
	}
	// The durable disable already happened and stands.
	if !bytes.Contains(e.readConfig(), []byte("enabled: false")) {
		t.Fatal("entry not disabled")
	}
}

// TestUnregisterAlreadyDisabled: an entry the operator disabled by hand is
// not edited again, and the report names no backup that was never made.
func TestUnregisterAlreadyDisabled(t *testing.T) {
	e := newSchedEnv(t, nil, directory.Profile{})
	e.preRegister()
	e.writeConfig(strings.Replace(schedYAML, "enabled: true", "enabled: false", 1))
	orig := e.readConfig()
	rep, err := directory.Unregister(context.Background(), e.lc, schedOrigin, &directory.UnregisterOpts{ConfigFile: e.config, Store: e.store})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Edited || rep.Backup != "" || rep.State != directory.StateDisabled || rep.Result.Outcome != directory.OutcomeRemoved {
		t.Fatalf("report %+v", rep)
	}
	if !bytes.Equal(e.readConfig(), orig) {
		t.Fatal("an already disabled entry was rewritten")
	}
}

// TestUnregisterNullEnabled: an entry written `enabled:` (null, which the
// configuration reads as false) is already disabled: unregister leaves the
// file alone and reaches the Directory, instead of failing with "layout
// not supported" before any traffic.
func TestUnregisterNullEnabled(t *testing.T) {
	e := newSchedEnv(t, nil, directory.Profile{})
	e.preRegister()
	e.writeConfig(strings.Replace(schedYAML, "enabled: true", "enabled:", 1))
	orig := e.readConfig()
	rep, err := directory.Unregister(context.Background(), e.lc, schedOrigin, &directory.UnregisterOpts{ConfigFile: e.config, Store: e.store})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Edited || rep.State != directory.StateDisabled || rep.Result.Outcome != directory.OutcomeRemoved {
		t.Fatalf("report %+v", rep)
	}
	if !bytes.Equal(e.readConfig(), orig) {
		t.Fatalf("file rewritten:\n%s", e.readConfig())
	}
	// --remove still finds and removes the entry.
	rep, err = directory.Unregister(context.Background(), e.lc, schedOrigin, &directory.UnregisterOpts{ConfigFile: e.config, Store: e.store, Remove: true})
	if err != nil || !rep.Removed || bytes.Contains(e.readConfig(), []byte(schedOrigin)) {
		t.Fatalf("--remove: %+v, %v\n%s", rep, err, e.readConfig())
	}
}
