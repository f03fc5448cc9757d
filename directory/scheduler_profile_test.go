package directory_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fedkit/fedkit/directory"
)

const schedYAMLProfile = schedYAML + `DIRECTORY_PROFILE:
  participation_mode: open
  languages: [fr, en]
  notes: Edited by the operator
`

var editedProfile = directory.Profile{ParticipationMode: "open", Languages: []string{"en", "fr"}, Notes: "Edited by the operator"}

// TestSchedulerKeepsManualSyncOfEditedProfile: the operator edits the
// profile and runs `relay directory sync` from a one-off process (its own
// client, built from the edited file). The running scheduler, built before
// the edit, must neither re-register the old profile over it nor repeat
// the sync (seed: a successful manual command is not "immediately
// duplicated by the scheduler").
func TestSchedulerKeepsManualSyncOfEditedProfile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSchedEnv(t, nil, directory.Profile{})
		ctx := context.Background()
		s := e.scheduler(nil)
		s.Tick(ctx) // startup pulse: registers the empty profile
		time.Sleep(time.Hour)

		e.writeConfig(schedYAMLProfile)
		oneOff, err := directory.New(testKey(t), &directory.Config{
			Actor: schedActor, PublicBaseURL: schedBase,
			Directories: []directory.Entry{{Origin: schedOrigin, Enabled: true}},
			Profile:     editedProfile, HTTP: e.srv.Doer(),
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := directory.RunManual(ctx, oneOff, directory.ManualSync, schedOrigin,
			&directory.ManualOpts{Store: e.store, Relay: schedActor}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		s.Tick(ctx)
		if got, want := e.ops(), []string{"v3 register", "v3 register"}; !slices.Equal(got, want) {
			t.Fatalf("requests = %q, want the pulse and the manual sync only", got)
		}
		reg, _ := e.srv.Registration(schedActor)
		if reg.Profile == nil || reg.Profile.Notes != editedProfile.Notes {
			t.Fatalf("the Directory holds profile %+v, want the edited one", reg.Profile)
		}
		if r := e.record(); r.ProfileDigest != oneOff.ProfileDigest() {
			t.Fatalf("stored digest %s, want the edited profile's %s", r.ProfileDigest, oneOff.ProfileDigest())
		}
	})
}

// TestSchedulerSeesProfileEdit: an edit of DIRECTORY_PROFILE in the file
// registers the new profile at the next wake, without a restart.
func TestSchedulerSeesProfileEdit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSchedEnv(t, nil, directory.Profile{})
		ctx := context.Background()
		s := e.scheduler(nil)
		s.Tick(ctx)
		time.Sleep(time.Hour)
		s.Tick(ctx) // nothing due
		e.writeConfig(schedYAMLProfile)
		s.Tick(ctx)
		if got, want := e.ops(), []string{"v3 register", "v3 register"}; !slices.Equal(got, want) {
			t.Fatalf("requests = %q, want %q", got, want)
		}
		reg, _ := e.srv.Registration(schedActor)
		if reg.Profile == nil || !slices.Equal(reg.Profile.Languages, []string{"en", "fr"}) || reg.Profile.ParticipationMode != "open" {
			t.Fatalf("registered profile %+v", reg.Profile)
		}
		want, _ := editedProfile.Normalize()
		if r := e.record(); r.ProfileDigest != want.Digest() {
			t.Fatalf("stored digest %s, want %s", r.ProfileDigest, want.Digest())
		}
		time.Sleep(time.Minute)
		s.Tick(ctx) // the new digest is stored: nothing more
		if n := len(e.ops()); n != 2 {
			t.Fatalf("%d requests after the edit settled, want 2", n)
		}
	})
}

// TestSchedulerProfileReloadDisabled: an application whose profile does not
// come from the file keeps it.
func TestSchedulerProfileReloadDisabled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSchedEnv(t, nil, editedProfile)
		s := e.scheduler(&directory.SchedulerConfig{DisableProfileReload: true})
		s.Tick(context.Background())
		reg, _ := e.srv.Registration(schedActor)
		if reg.Profile == nil || reg.Profile.Notes != editedProfile.Notes {
			t.Fatalf("registered profile %+v, want the client's own", reg.Profile)
		}
	})
}
