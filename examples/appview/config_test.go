package main

import (
	"flag"
	"io"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"DATABASE_URL":             "postgres://localhost/appview",
		"JETSTREAM_URL":            "ws://localhost:6008/subscribe",
		"TRUSTED_BRIDGE_PDS_HOSTS": " pds.bridge.test , https://pds2.bridge.test:8443 ",
	}
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr string
		check   func(t *testing.T, c Config)
	}{
		{name: "env with defaults", check: func(t *testing.T, c Config) {
			if !reflect.DeepEqual(c.TrustedHosts, []string{"pds.bridge.test", "https://pds2.bridge.test:8443"}) {
				t.Errorf("trusted = %q", c.TrustedHosts)
			}
			if c.PLCURL != PLCURLDefault || c.Listen != ListenDefault || c.RedriveInterval != RedriveIntervalDefault || c.Lanes != LanesDefault {
				t.Errorf("defaults = %+v", c)
			}
		}},
		{name: "flags override env", args: []string{"-trusted-hosts", "pds.other.test", "-plc-url", "http://127.0.0.1:2582", "-listen", ":9000"},
			check: func(t *testing.T, c Config) {
				if !reflect.DeepEqual(c.TrustedHosts, []string{"pds.other.test"}) || c.PLCURL != "http://127.0.0.1:2582" || c.Listen != ":9000" {
					t.Errorf("config = %+v", c)
				}
			}},
		{name: "PLC_URL from env", env: map[string]string{"PLC_URL": "https://plc.example.test"}, check: func(t *testing.T, c Config) {
			if c.PLCURL != "https://plc.example.test" {
				t.Errorf("PLC = %q", c.PLCURL)
			}
		}},
		{name: "missing database", env: map[string]string{"DATABASE_URL": ""}, wantErr: "DATABASE_URL"},
		{name: "jetstream must be websocket", env: map[string]string{"JETSTREAM_URL": "http://localhost/subscribe"}, wantErr: "JETSTREAM_URL"},
		{name: "redrive must outlast the negative TTL", env: map[string]string{"REDRIVE_INTERVAL": "60s"}, wantErr: "REDRIVE_INTERVAL"},
		{name: "malformed trusted host", env: map[string]string{"TRUSTED_BRIDGE_PDS_HOSTS": "https://u@pds.bridge.test"}, wantErr: "TRUSTED_BRIDGE_PDS_HOSTS"},
		{name: "bad PLC URL", env: map[string]string{"PLC_URL": "plc.directory"}, wantErr: "PLC_URL"},
		{name: "bad bool", env: map[string]string{"INDEX_ALL_PROFILES": "maybe"}, wantErr: "INDEX_ALL_PROFILES"},
		{name: "index all and redrive from env", env: map[string]string{"INDEX_ALL_PROFILES": "true", "REDRIVE_INTERVAL": "10m"},
			check: func(t *testing.T, c Config) {
				if !c.IndexAllProfiles || c.RedriveInterval != 10*time.Minute {
					t.Errorf("config = %+v", c)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{}
			for k, v := range base {
				env[k] = v
			}
			for k, v := range tt.env {
				env[k] = v
			}
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			c, err := loadConfig(fs, tt.args, func(k string) string { return env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func TestSubscribeURL(t *testing.T) {
	t.Parallel()
	u, _ := url.Parse(subscribeURL("ws://localhost:6008/subscribe"))
	if got := u.Query()["wantedCollections"]; len(got) != 3 {
		t.Errorf("wantedCollections = %v", got)
	}
	// An operator's own filter is kept as given.
	u, _ = url.Parse(subscribeURL("ws://localhost:6008/subscribe?wantedCollections=app.bsky.actor.profile"))
	if got := u.Query()["wantedCollections"]; len(got) != 1 {
		t.Errorf("wantedCollections = %v", got)
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want int
	}{
		{nil, exitUsage},
		{[]string{"frobnicate"}, exitUsage},
		{[]string{"serve"}, exitUsage}, // no DATABASE_URL
		{[]string{"help"}, exitOK},
		{[]string{"serve", "-h"}, exitOK},
		{[]string{"reconcile-handles", "-h"}, exitOK},
		{[]string{"migrate", "-no-such-flag"}, exitUsage},
	} {
		if code := runEnv(t.Context(), tt.args, env{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}); code != tt.want {
			t.Errorf("%v: exit %d, want %d", tt.args, code, tt.want)
		}
	}
}

func TestMigrateCommand(t *testing.T) {
	t.Parallel()
	h := setup(t) // already migrated: the command must find nothing to do
	var out strings.Builder
	vars := map[string]string{"DATABASE_URL": h.connStr}
	code := runEnv(t.Context(), []string{"migrate"}, env{stdout: &out, stderr: io.Discard, getenv: func(k string) string { return vars[k] }})
	if code != exitOK || !strings.Contains(out.String(), "up to date") {
		t.Fatalf("exit %d: %q", code, out.String())
	}
}
