package main

import (
	"context"
	"crypto"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/directorytest"
	"github.com/fedkit/fedkit/examples/relay/internal/store"
)

const relayActor = "https://relay.example/actor"

// dirSetup copies config.example.yml, points it at a fake Directory with its
// second entry enabled, and gives the relay its key and three subscribers
// (two active).
func dirSetup(t *testing.T) (*directorytest.Server, string, func(args ...string) (int, string, string)) {
	t.Helper()
	key := testKey(t, "relay")
	d := directorytest.New(&directorytest.Config{EnrollmentOpen: true,
		Keys: map[string]crypto.PublicKey{relayActor + "#main-key": key.Public()}})
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	writeRelayKey(t, data)
	fs, err := store.OpenFile(filepath.Join(data, "subscribers.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range []store.State{store.StateActive, store.StateActive, store.StatePending} {
		h := string(rune('a'+i)) + ".example"
		if err := fs.Put(context.Background(), store.Subscriber{Actor: "https://" + h + "/actor", Inbox: "https://" + h + "/inbox",
			Host: h, Style: store.StyleMastodon, State: st}); err != nil {
			t.Fatal(err)
		}
	}
	example, err := os.ReadFile("config.example.yml")
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(example), "PUBLIC_URL: http://localhost:8080", "PUBLIC_URL: https://relay.example", 1)
	y = strings.Replace(y, "origin: https://directory.example.org\n    enabled: false", "origin: "+d.Origin()+"\n    enabled: true", 1)
	if y == string(example) || !strings.Contains(y, d.Origin()) {
		t.Fatal("config.example.yml no longer has the expected shape")
	}
	cfgPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(y), 0o640); err != nil {
		t.Fatal(err)
	}
	run1 := func(args ...string) (int, string, string) {
		e, out, errb := testEnv(t)
		e.directoryHTTP = d.Doer()
		code := run(context.Background(), append([]string{"-c", cfgPath}, args...), e)
		t.Logf("relay %s -> exit %d\n%s%s", strings.Join(args, " "), code, out, errb)
		return code, out.String(), errb.String()
	}
	return d, cfgPath, run1
}

func TestDirectoryCommands(t *testing.T) {
	d, cfgPath, relay := dirSetup(t)
	origin := d.Origin()

	t.Run("local status", func(t *testing.T) {
		code, out, _ := relay("directory", "status")
		if code != exitOK || !strings.Contains(out, "https://directory.argentwolf.org") || !strings.Contains(out, origin) {
			t.Fatalf("exit %d, output:\n%s", code, out)
		}
		if !strings.Contains(out, "disabled") || !strings.Contains(out, "configured") {
			t.Errorf("want one disabled and one configured entry:\n%s", out)
		}
	})
	t.Run("remote status", func(t *testing.T) {
		code, out, errs := relay("directory", "status", origin)
		if code != exitOK || !strings.Contains(out, "v1, v2, v3") || !strings.Contains(out, "would use") {
			t.Fatalf("exit %d, output:\n%s%s", code, out, errs)
		}
	})
	t.Run("register", func(t *testing.T) {
		code, out, errs := relay("directory", "register", origin)
		if code != exitOK || !strings.Contains(out, "register "+origin+": created") {
			t.Fatalf("exit %d:\n%s%s", code, out, errs)
		}
		reg, ok := d.Registration(relayActor)
		if !ok || !reg.Active || reg.Version != directory.V3 {
			t.Fatalf("registration = %+v, %v", reg, ok)
		}
		if reg.Telemetry != 2 {
			t.Errorf("participating_instance_count = %d; want 2 active subscribers", reg.Telemetry)
		}
	})
	t.Run("heartbeat", func(t *testing.T) {
		code, out, errs := relay("directory", "heartbeat", origin)
		if code != exitOK || !strings.Contains(out, "heartbeat "+origin) {
			t.Fatalf("exit %d:\n%s%s", code, out, errs)
		}
		if reg, _ := d.Registration(relayActor); reg.Heartbeats != 1 {
			t.Errorf("heartbeats = %d; want 1", reg.Heartbeats)
		}
	})
	t.Run("sync", func(t *testing.T) {
		if code, out, errs := relay("directory", "sync", origin); code != exitOK {
			t.Fatalf("exit %d:\n%s%s", code, out, errs)
		}
	})
	t.Run("retry later", func(t *testing.T) {
		d.Enqueue(directorytest.Reply{StatusCode: 503, Code: directory.CodeInternalError, RetryAfter: "120"})
		code, _, errs := relay("directory", "heartbeat", origin)
		if code != exitTempFail || !strings.Contains(errs, "internal_error") || !strings.Contains(errs, "retry after") {
			t.Fatalf("exit %d; want %d with retry guidance:\n%s", code, exitTempFail, errs)
		}
	})
	t.Run("suspended", func(t *testing.T) {
		d.Suspend(relayActor, true)
		defer d.Suspend(relayActor, false)
		code, _, errs := relay("directory", "heartbeat", origin)
		if code != exitFailed || !strings.Contains(errs, "relay_suspended") {
			t.Fatalf("exit %d; want %d:\n%s", code, exitFailed, errs)
		}
	})
	t.Run("disabled entry", func(t *testing.T) {
		code, _, errs := relay("directory", "register", "https://directory.argentwolf.org")
		if code != exitConfig || !strings.Contains(errs, "disabled") {
			t.Fatalf("exit %d:\n%s", code, errs)
		}
		if n := len(d.Requests()); n != 5 {
			t.Errorf("%d lifecycle requests reached the fake; a disabled entry must send none", n)
		}
	})
	t.Run("unknown origin", func(t *testing.T) {
		if code, _, errs := relay("directory", "register", "https://elsewhere.example"); code != exitConfig {
			t.Fatalf("exit %d:\n%s", code, errs)
		}
	})
	t.Run("usage", func(t *testing.T) {
		for _, args := range [][]string{
			{"directory"}, {"directory", "register"}, {"directory", "bogus", origin},
			{"directory", "status", origin, "extra"}, {"directory", "register", origin, "--remove"},
			{"directory", "sync", origin, "--bogus"},
		} {
			if code, _, _ := relay(args...); code != exitUsage {
				t.Errorf("relay %v: exit %d; want %d", args, code, exitUsage)
			}
		}
		if code, _, _ := relay("directory", "register", "http://directory.example"); code != exitUsage {
			t.Errorf("non-https origin: exit %d; want %d", code, exitUsage)
		}
	})
	t.Run("unregister edits the config", func(t *testing.T) {
		before, _ := os.ReadFile(cfgPath)
		code, out, errs := relay("directory", "unregister", origin)
		if code != exitOK || !strings.Contains(out, "disabled "+origin) || !strings.Contains(out, "local state: disabled") {
			t.Fatalf("exit %d:\n%s%s", code, out, errs)
		}
		if reg, _ := d.Registration(relayActor); reg.Active {
			t.Error("still active at the Directory")
		}
		after, _ := os.ReadFile(cfgPath)
		if !strings.Contains(string(after), "origin: "+origin+"\n    enabled: false") {
			t.Errorf("entry not disabled in the file:\n%s", after)
		}
		// Only the entry changed: comments and other keys survive.
		if !strings.Contains(string(after), "# Status page token") || len(after) < len(before)-10 {
			t.Errorf("unrelated content lost:\n%s", after)
		}
		backups, _ := filepath.Glob(cfgPath + "*.bak")
		if len(backups) != 1 {
			t.Errorf("backups = %v; want one", backups)
		}
		// The disabled entry now refuses register.
		if code, _, _ := relay("directory", "register", origin); code != exitConfig {
			t.Errorf("register after unregister: exit %d; want %d", code, exitConfig)
		}
		code, out, _ = relay("directory", "status")
		if code != exitOK || !strings.Contains(out, origin) {
			t.Errorf("status after unregister: %d\n%s", code, out)
		}
	})
	t.Run("unregister --remove", func(t *testing.T) {
		code, out, errs := relay("directory", "unregister", origin, "--remove")
		if code != exitOK || !strings.Contains(out, "removed "+origin) {
			t.Fatalf("exit %d:\n%s%s", code, out, errs)
		}
		after, _ := os.ReadFile(cfgPath)
		if strings.Contains(string(after), origin+"\n") {
			t.Errorf("entry still in the file:\n%s", after)
		}
		if !strings.Contains(string(after), "https://directory.argentwolf.org") {
			t.Errorf("the other entry was lost:\n%s", after)
		}
	})
}

func TestUnregisterRemoteFailureLeavesDisabled(t *testing.T) {
	d, cfgPath, relay := dirSetup(t)
	if code, _, errs := relay("directory", "register", d.Origin()); code != exitOK {
		t.Fatalf("register: %s", errs)
	}
	d.SetLifecycleAvailable(false)
	code, _, errs := relay("directory", "unregister", d.Origin())
	if code != exitTempFail || !strings.Contains(errs, "unregister-pending") {
		t.Fatalf("exit %d; want %d:\n%s", code, exitTempFail, errs)
	}
	after, _ := os.ReadFile(cfgPath)
	if !strings.Contains(string(after), "origin: "+d.Origin()+"\n    enabled: false") {
		t.Errorf("entry must stay disabled after a remote failure:\n%s", after)
	}
}

func TestTestConfig(t *testing.T) {
	_, cfgPath, relay := dirSetup(t)
	t.Run("example is valid and strict-clean", func(t *testing.T) {
		e, out, errb := testEnv(t)
		if code := run(context.Background(), []string{"-t", "-c", "config.example.yml", "--strict"}, e); code != exitOK {
			t.Fatalf("exit %d:\n%s%s", code, out, errb)
		}
		if !strings.Contains(out.String(), "rate limit     600 a minute per server, bursts of 120") ||
			!strings.Contains(out.String(), "seen-set       memory (per process)") {
			t.Errorf("-t does not show the rate limit and seen-set:\n%s", out)
		}
		if _, err := os.Stat(filepath.Join("data")); err == nil {
			t.Log("note: examples/relay/data exists from a local run")
		}
	})
	t.Run("no state changes", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "config.yml")
		if err := os.WriteFile(p, []byte("DATA_DIR: fresh\nREDIS_URL: redis://127.0.0.1:1/0\nPOSTGRES_URL: postgres://u@127.0.0.1:1/db\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		e, out, errb := testEnv(t)
		if code := run(context.Background(), []string{"--test-config", "-c", p}, e); code != exitOK {
			t.Fatalf("exit %d:\n%s%s", code, out, errb)
		}
		// Unreachable Postgres and Redis: validation must not have tried them,
		// and must not have made the data directory or a key.
		if _, err := os.Stat(filepath.Join(dir, "fresh")); err == nil {
			t.Fatal("-t created the data directory")
		}
		if !strings.Contains(out.String(), "postgres") || !strings.Contains(out.String(), "redis") {
			t.Errorf("output does not say which backends would be used:\n%s", out)
		}
	})
	t.Run("strict fails on a bad optional profile value", func(t *testing.T) {
		b, _ := os.ReadFile(cfgPath)
		bad := strings.Replace(string(b), `contact_url: ""`, `contact_url: "http://not-https.example/contact"`, 1)
		if bad == string(b) {
			t.Fatal("example profile has no contact_url line")
		}
		if err := os.WriteFile(cfgPath, []byte(bad), 0o640); err != nil {
			t.Fatal(err)
		}
		code, _, errs := relay("-t")
		if code != exitOK || !strings.Contains(errs, "contact_url") {
			t.Fatalf("lenient: exit %d, want 0 with a warning naming contact_url:\n%s", code, errs)
		}
		code, _, errs = relay("-t", "--strict")
		if code != exitConfig || !strings.Contains(errs, "strict") {
			t.Fatalf("strict: exit %d; want %d:\n%s", code, exitConfig, errs)
		}
	})
	t.Run("invalid", func(t *testing.T) {
		for name, y := range map[string]string{
			"unknown key":         "PUBLIK_URL: https://relay.example\n",
			"url with path":       "PUBLIC_URL: https://relay.example/relay\n",
			"bad listen":          "LISTEN: nowhere\n",
			"bad participation":   "DIRECTORY_PROFILE:\n  participation_mode: sometimes\n",
			"too many dirs":       "DIRECTORIES:\n" + strings.Repeat("  - origin: https://d.example\n", 2),
			"short admin token":   "ADMIN_TOKEN: short\n",
			"bad domain":          "BLOCKED_DOMAINS: [\"https://bad.example/\"]\n",
			"http with dir":       "PUBLIC_URL: http://localhost:8080\nDIRECTORIES:\n  - origin: https://d.example\n    enabled: true\n",
			"bad postgres url":    "POSTGRES_URL: \"postgres://%zz\"\n",
			"bad job concurrency": "JOB_CONCURRENCY: -1\n",
		} {
			p := filepath.Join(t.TempDir(), "config.yml")
			if err := os.WriteFile(p, []byte(y), 0o600); err != nil {
				t.Fatal(err)
			}
			e, _, errb := testEnv(t)
			if code := run(context.Background(), []string{"-t", "-c", p}, e); code != exitConfig {
				t.Errorf("%s: exit %d; want %d\n%s", name, code, exitConfig, errb)
			}
		}
	})
}

// TestUnregisterAcknowledgeRefusedForWritableFile: the environment-only
// acknowledgement on a writable file-backed configuration is a usage error
// before any traffic; the file keeps the entry as it was, and a plain
// unregister then disables it durably.
func TestUnregisterAcknowledgeRefusedForWritableFile(t *testing.T) {
	d, cfgPath, relay := dirSetup(t)
	if code, _, errs := relay("directory", "register", d.Origin()); code != exitOK {
		t.Fatalf("register: %s", errs)
	}
	sent := len(d.Requests())
	before, _ := os.ReadFile(cfgPath)
	for _, args := range [][]string{
		{"directory", "unregister", d.Origin(), "--acknowledge-external-disable"},
		{"directory", "unregister", d.Origin(), "--acknowledge-external-disable", "--remove"},
	} {
		code, _, errs := relay(args...)
		if code != exitUsage || !strings.Contains(errs, "environment-only") {
			t.Fatalf("relay %v: exit %d; want %d:\n%s", args, code, exitUsage, errs)
		}
	}
	if after, _ := os.ReadFile(cfgPath); string(after) != string(before) {
		t.Error("the file was edited")
	}
	if n := len(d.Requests()); n != sent {
		t.Errorf("%d requests sent after the refusal", n-sent)
	}
	if reg, _ := d.Registration(relayActor); !reg.Active {
		t.Error("unregistered although refused")
	}
	code, out, errs := relay("directory", "unregister", d.Origin())
	if code != exitOK || !strings.Contains(out, "disabled "+d.Origin()) {
		t.Fatalf("plain unregister: exit %d:\n%s%s", code, out, errs)
	}
}

// TestWritable: the probe behind the refusal opens without truncating.
func TestWritable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.yml")
	if writable(p) {
		t.Error("a missing file is not writable")
	}
	if err := os.WriteFile(p, []byte("x: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !writable(p) {
		t.Error("a writable file was not seen as writable")
	}
	if b, _ := os.ReadFile(p); string(b) != "x: 1\n" {
		t.Errorf("the probe changed the file: %q", b)
	}
}

// TestDirectoryCommandWording: what the operator reads names the step that
// failed and why nothing was sent.
func TestDirectoryCommandWording(t *testing.T) {
	t.Run("reconciliation register refused", func(t *testing.T) {
		d, _, relay := dirSetup(t)
		d.SetEnrollment(false) // never registered, and first registration closed
		code, _, errs := relay("directory", "heartbeat", d.Origin())
		if code != exitFailed || !strings.Contains(errs, "relay_not_registered") ||
			!strings.Contains(errs, "register "+d.Origin()+": refused: HTTP 403 enrollment_closed") {
			t.Fatalf("exit %d; want %d, naming the register as refused:\n%s", code, exitFailed, errs)
		}
		if strings.Contains(errs, "heartbeat "+d.Origin()+": refused") {
			t.Errorf("the refusal is blamed on the heartbeat:\n%s", errs)
		}
	})
	t.Run("suspended and not registered", func(t *testing.T) {
		// As the real server answers: 409 to the heartbeat, then 403 to
		// the one reconciliation register.
		d, _, relay := dirSetup(t)
		d.Suspend(relayActor, true)
		code, _, errs := relay("directory", "heartbeat", d.Origin())
		if code != exitFailed || !strings.Contains(errs, "relay_not_registered") ||
			!strings.Contains(errs, "register "+d.Origin()+": refused: HTTP 403 relay_suspended") {
			t.Fatalf("exit %d:\n%s", code, errs)
		}
		if got := len(d.Requests()); got != 2 {
			t.Errorf("%d requests, want heartbeat and register only", got)
		}
	})
	t.Run("lifecycle off: register and sync send nothing", func(t *testing.T) {
		d, _, relay := dirSetup(t)
		d.SetLifecycleAvailable(false)
		for _, cmd := range []string{"register", "sync", "heartbeat"} {
			code, _, errs := relay("directory", cmd, d.Origin())
			if code != exitFailed || !strings.Contains(errs, "not sent") || !strings.Contains(errs, "lifecycle") {
				t.Errorf("%s: exit %d; want %d saying nothing was sent:\n%s", cmd, code, exitFailed, errs)
			}
		}
		if n := len(d.Requests()); n != 0 {
			t.Errorf("%d signed requests reached the Directory", n)
		}
		code, out, errs := relay("directory", "status", d.Origin())
		if code != exitOK || !strings.Contains(out, "lifecycle") || regexp.MustCompile(`would use\s+v\d`).MatchString(out) ||
			!strings.Contains(out, "none (lifecycle") {
			t.Errorf("status: exit %d; want lifecycle unavailable, not a protocol:\n%s%s", code, out, errs)
		}
	})
}
