package directory_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/directory"
)

const goodConfig = `# relay configuration
ACTOR_PEM: /actor.pem
DIRECTORIES:
  - origin: https://directory.argentwolf.org
    enabled: true
  - origin: https://directory.example.org
DIRECTORY_SCHEDULER_ENABLED: true
DIRECTORY_PROFILE:
  participation_mode: open
  availability: public
  relay_type: general
  languages: [fr, en, " en "]
  countries:
    - US
  regions: ["North America"]
  topics: [general]
  contact_fediverse: "@relay@example.social"
  contact_email: relay@example.com
  contact_url: https://relay.example/contact
  participation_url: https://relay.example/join
  notes: Public community relay
`

func TestParseConfig(t *testing.T) {
	t.Parallel()
	s, warns, err := directory.ParseConfig([]byte(goodConfig), nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("err %v warns %v", err, warns)
	}
	if len(s.Directories) != 2 || !s.Directories[0].Enabled || s.Directories[1].Enabled ||
		s.Directories[0].Origin != "https://directory.argentwolf.org" || s.Directories[0].Line != 4 {
		t.Fatalf("directories %+v", s.Directories)
	}
	if !s.SchedulerEnabled || !s.ProfileSet {
		t.Fatal("gate or profile lost")
	}
	if strings.Join(s.Profile.Languages, ",") != "en,fr" || s.Profile.Notes != "Public community relay" {
		t.Fatalf("profile %+v", s.Profile)
	}
	if s.Profile.Digest() != fixtureProfile.Digest() {
		t.Fatal("profile from YAML differs from the fixture profile")
	}
	if e, ok := s.Lookup("https://directory.example.org"); !ok || e.Enabled {
		t.Fatalf("lookup: %+v %v", e, ok)
	}
}

func TestParseConfigDefaults(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{"empty": "", "unrelated": "LISTEN: :8080\n", "null lists": "DIRECTORIES:\nDIRECTORY_PROFILE:\n"} {
		t.Run(name, func(t *testing.T) {
			s, warns, err := directory.ParseConfig([]byte(in), &directory.LoadOpts{Strict: true})
			if err != nil || len(warns) != 0 {
				t.Fatal(err, warns)
			}
			if len(s.Directories) != 0 || s.SchedulerEnabled {
				t.Fatalf("%+v", s)
			}
			if b, _ := s.Profile.MarshalJSON(); !strings.Contains(string(b), `"languages":[]`) {
				t.Fatalf("profile %s", b)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	t.Parallel()
	nine := "DIRECTORIES:\n"
	for i := 0; i < 9; i++ {
		nine += "  - origin: https://d" + string(rune('a'+i)) + ".example\n"
	}
	cases := map[string]string{
		"nine directories":        nine,
		"duplicate origin":        "DIRECTORIES:\n  - origin: https://d.example\n  - origin: https://d.example\n",
		"origin with path":        "DIRECTORIES:\n  - origin: https://d.example/x\n",
		"origin with slash":       "DIRECTORIES:\n  - origin: https://d.example/\n",
		"origin http":             "DIRECTORIES:\n  - origin: http://d.example\n",
		"origin :443":             "DIRECTORIES:\n  - origin: https://d.example:443\n",
		"origin credentials":      "DIRECTORIES:\n  - origin: https://u:p@d.example\n",
		"origin query":            "DIRECTORIES:\n  - origin: https://d.example?x=1\n",
		"origin fragment":         "DIRECTORIES:\n  - origin: https://d.example#x\n",
		"origin missing":          "DIRECTORIES:\n  - enabled: true\n",
		"origin not string":       "DIRECTORIES:\n  - origin: 12\n",
		"enabled not bool":        "DIRECTORIES:\n  - origin: https://d.example\n    enabled: \"yes\"\n",
		"unknown entry key":       "DIRECTORIES:\n  - origin: https://d.example\n    enable: true\n",
		"entries not a list":      "DIRECTORIES: https://d.example\n",
		"entry not a mapping":     "DIRECTORIES:\n  - https://d.example\n",
		"gate not bool":           "DIRECTORY_SCHEDULER_ENABLED: maybe\n",
		"profile not a mapping":   "DIRECTORY_PROFILE: open\n",
		"participation_mode bad":  "DIRECTORY_PROFILE:\n  participation_mode: invite-only\n",
		"yaml syntax":             "DIRECTORIES: [\n",
		"duplicate top-level key": "DIRECTORIES:\nDIRECTORIES:\n",
		"two documents":           "a: 1\n---\nb: 2\n",
		"top level list":          "- a\n",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := directory.ParseConfig([]byte(in), nil)
			if !errors.Is(err, directory.ErrConfig) {
				t.Fatalf("got %v, want ErrConfig", err)
			}
		})
	}
}

// TestParseConfigWarnings: invalid optional profile values are dropped
// with a warning naming the line; --strict turns them into an error.
func TestParseConfigWarnings(t *testing.T) {
	t.Parallel()
	in := `DIRECTORY_PROFILE:
  participation_mode: closed
  contact_url: http://relay.example/contact
  contact_email: "Relay <relay@example.com>"
  languages: en
  colour: blue
  notes: fine
`
	s, warns, err := directory.ParseConfig([]byte(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, w := range warns {
		got[w.Field] = w.Line
		if strings.Contains(w.String(), "http://relay.example") {
			t.Errorf("warning echoes the value: %s", w)
		}
	}
	want := map[string]int{
		"DIRECTORY_PROFILE.contact_url": 3, "DIRECTORY_PROFILE.contact_email": 4,
		"DIRECTORY_PROFILE.languages": 5, "DIRECTORY_PROFILE.(unknown key)": 6,
	}
	for f, l := range want {
		if got[f] != l {
			t.Errorf("warning for %s at line %d, want %d (all: %v)", f, got[f], l, warns)
		}
	}
	if s.Profile.ContactURL != "" || s.Profile.ContactEmail != "" || len(s.Profile.Languages) != 0 ||
		s.Profile.Notes != "fine" || s.Profile.ParticipationMode != "closed" {
		t.Fatalf("profile %+v", s.Profile)
	}
	for _, w := range warns {
		if w.Field == "DIRECTORY_PROFILE.contact_url" && !strings.Contains(w.String(), "line 3: DIRECTORY_PROFILE.contact_url") {
			t.Errorf("warning text %q lacks its line", w)
		}
	}
	_, warns2, err := directory.ParseConfig([]byte(in), &directory.LoadOpts{Strict: true})
	if !errors.Is(err, directory.ErrStrictWarnings) || len(warns2) != len(warns) {
		t.Fatalf("strict: %v (%d warnings)", err, len(warns2))
	}
}

func TestLoadEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"DIRECTORIES":                 "[{origin: https://directory.example, enabled: true}]",
		"DIRECTORY_PROFILE":           "participation_mode: restricted\nlanguages: [en]\ncontact_url: ftp://x\n",
		"DIRECTORY_SCHEDULER_ENABLED": "true",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	s, warns, err := directory.LoadEnv(lookup, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Directories) != 1 || !s.Directories[0].Enabled || s.SchedulerEnabled {
		t.Fatalf("settings %+v", s)
	}
	if s.Profile.ParticipationMode != "restricted" || s.Profile.ContactURL != "" {
		t.Fatalf("profile %+v", s.Profile)
	}
	var sawGate, sawURL bool
	for _, w := range warns {
		sawGate = sawGate || w.Field == directory.KeySchedulerEnabled
		sawURL = sawURL || (w.Field == "DIRECTORY_PROFILE.contact_url" && w.Source == "DIRECTORY_PROFILE" && w.Line == 3)
	}
	if !sawGate || !sawURL {
		t.Fatalf("warnings %v", warns)
	}
	if _, _, err := directory.LoadEnv(lookup, &directory.LoadOpts{Strict: true}); !errors.Is(err, directory.ErrStrictWarnings) {
		t.Fatalf("strict env: %v", err)
	}
	empty := func(string) (string, bool) { return "", false }
	if s, w, err := directory.LoadEnv(empty, &directory.LoadOpts{Strict: true}); err != nil || len(w) != 0 || s.ProfileSet {
		t.Fatalf("empty env: %+v %v %v", s, w, err)
	}
}

// TestParseConfigParticipationModeNotString: participation_mode accepts
// only open, restricted or closed (seed), so a number, a boolean, a list or
// a mapping is a configuration error naming its line, not a warning.
func TestParseConfigParticipationModeNotString(t *testing.T) {
	t.Parallel()
	for name, v := range map[string]string{
		"integer":    "5",
		"boolean":    "true",
		"float":      "1.5",
		"flow list":  "[open]",
		"block list": "\n    - open",
		"mapping":    "{mode: open}",
	} {
		y := "DIRECTORIES: []\nDIRECTORY_PROFILE:\n  availability: public\n  participation_mode: " + v + "\n"
		for _, strict := range []bool{false, true} {
			_, _, err := directory.ParseConfig([]byte(y), &directory.LoadOpts{Strict: strict})
			if !errors.Is(err, directory.ErrConfig) || errors.Is(err, directory.ErrStrictWarnings) {
				t.Errorf("%s (strict %v): err = %v, want ErrConfig", name, strict, err)
				continue
			}
			if !strings.Contains(err.Error(), "line 4") || !strings.Contains(err.Error(), "participation_mode") {
				t.Errorf("%s: error %q does not name participation_mode and line 4", name, err)
			}
		}
	}
	// Unset stays allowed: an empty value is the explicit empty one.
	for _, v := range []string{"", "null", `""`, "open"} {
		y := "DIRECTORY_PROFILE:\n  participation_mode: " + v + "\n"
		if _, w, err := directory.ParseConfig([]byte(y), nil); err != nil || len(w) != 0 {
			t.Errorf("participation_mode: %s: err %v, warnings %v", v, err, w)
		}
	}
}
