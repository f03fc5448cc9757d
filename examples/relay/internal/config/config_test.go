package config_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/examples/relay/internal/config"
)

func TestParseDefaults(t *testing.T) {
	c, err := config.Parse(nil, "/etc/relay/config.yml", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string][2]string{
		"public url": {c.PublicURL, config.PublicURLDefault},
		"listen":     {c.Listen, config.ListenDefault},
		"name":       {c.ServiceName, config.ServiceNameDefault},
		"data dir":   {c.DataDir, "/etc/relay/data"},
		"actor key":  {c.ActorKey, "/etc/relay/data/actor.pem"},
		"prefix":     {c.RedisPrefix, config.RedisPrefixDefault},
		"actor":      {c.ActorURL(), "http://localhost:8080/actor"},
		"key id":     {c.KeyID(), "http://localhost:8080/actor#main-key"},
		"host":       {c.Host(), "localhost:8080"},
	} {
		if c[0] != c[1] {
			t.Errorf("%s = %q; want %q", name, c[0], c[1])
		}
	}
}

func TestParse(t *testing.T) {
	env := map[string]string{"POSTGRES_URL": "postgres://env@db/relay", "ADMIN_TOKEN": "from-the-environment-123"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	y := `PUBLIC_URL: HTTPS://Relay.Example/
POSTGRES_URL: postgres://file@db/relay
ACTOR_KEY: /abs/key.pem
DATA_DIR: ../state
BLOCKED_DOMAINS: ["*.Spam.Example", "bad.example."]
ALLOWED_DOMAINS: []
MANUAL_APPROVAL: true
`
	c, err := config.Parse([]byte(y), "/srv/relay/config.yml", lookup, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.PublicURL != "https://relay.example" {
		t.Errorf("PublicURL = %q", c.PublicURL)
	}
	if c.PostgresURL != env["POSTGRES_URL"] || c.AdminToken != env["ADMIN_TOKEN"] {
		t.Errorf("environment does not win: %q %q", c.PostgresURL, c.AdminToken)
	}
	if c.ActorKey != "/abs/key.pem" || c.DataDir != filepath.Clean("/srv/state") {
		t.Errorf("paths: key %q data %q", c.ActorKey, c.DataDir)
	}
	if strings.Join(c.BlockedDomains, ",") != "spam.example,bad.example" {
		t.Errorf("blocked = %q", c.BlockedDomains)
	}
	if !c.ManualApproval {
		t.Error("MANUAL_APPROVAL lost")
	}
}

func TestParseInvalid(t *testing.T) {
	for name, y := range map[string]string{
		"unknown key":         "PUBLIK_URL: x\n",
		"not yaml":            "PUBLIC_URL: [\n",
		"ftp url":             "PUBLIC_URL: ftp://relay.example\n",
		"query":               "PUBLIC_URL: https://relay.example/?a=b\n",
		"credentials":         "PUBLIC_URL: https://u:p@relay.example\n",
		"listen":              "LISTEN: 8080\n",
		"listen port":         "LISTEN: 127.0.0.1:99999\n",
		"concurrency":         "JOB_CONCURRENCY: 5000\n",
		"domain":              "ALLOWED_DOMAINS: [\"a b\"]\n",
		"redis":               "REDIS_URL: http://redis\n",
		"token":               "ADMIN_TOKEN: abc\n",
		"directory origin":    "DIRECTORIES:\n  - origin: http://d.example\n",
		"participation mode":  "DIRECTORY_PROFILE:\n  participation_mode: maybe\n",
		"enabled without tls": "DIRECTORIES:\n  - origin: https://d.example\n    enabled: true\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := config.Parse([]byte(y), "/x/config.yml", nil, nil); !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("err = %v; want ErrInvalid", err)
			}
		})
	}
}

func TestStrict(t *testing.T) {
	y := "DIRECTORY_PROFILE:\n  participation_mode: open\n  contact_email: not-an-email\n"
	c, err := config.Parse([]byte(y), "/x/config.yml", nil, nil)
	if err != nil || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "contact_email") {
		t.Fatalf("lenient: %v, warnings %q", err, c.Warnings)
	}
	if _, err := config.Parse([]byte(y), "/x/config.yml", nil, &config.LoadOpts{Strict: true}); !errors.Is(err, directory.ErrStrictWarnings) {
		t.Fatalf("strict: %v; want ErrStrictWarnings", err)
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{
		"PUBLIC_URL": "https://relay.example", "LISTEN": "0.0.0.0:9000", "MANUAL_APPROVAL": "true",
		"BLOCKED_DOMAINS": "a.example, b.example", "JOB_CONCURRENCY": "32",
		"DIRECTORIES": "- origin: https://d.example\n  enabled: true\n",
	}
	c, err := config.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Path != "" || c.Listen != "0.0.0.0:9000" || !c.ManualApproval || c.JobConcurrency != 32 || len(c.BlockedDomains) != 2 {
		t.Errorf("config = %+v", c)
	}
	if len(c.Directory.Directories) != 1 || !c.Directory.Directories[0].Enabled {
		t.Errorf("directories = %+v", c.Directory.Directories)
	}
	env["MANUAL_APPROVAL"] = "sometimes"
	if _, err := config.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, nil); !errors.Is(err, config.ErrInvalid) {
		t.Errorf("bad boolean: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("PUBLIC_URL: https://relay.example\nLISTEN: 127.0.0.1:8080\n"))
	f.Add([]byte("DIRECTORIES:\n  - origin: https://d.example\n    enabled: false\nDIRECTORY_PROFILE:\n  participation_mode: open\n"))
	f.Add([]byte("BLOCKED_DOMAINS: [a.example]\nJOB_CONCURRENCY: 3\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := config.Parse(b, "/x/config.yml", nil, nil)
		if err != nil {
			return
		}
		if !strings.HasPrefix(c.PublicURL, "http") || c.Listen == "" || c.DataDir == "" || c.ActorKey == "" || c.Directory == nil {
			t.Fatalf("accepted config without defaults: %+v", c)
		}
		for _, d := range append(c.BlockedDomains, c.AllowedDomains...) {
			if d == "" || strings.ContainsAny(d, "/: ") {
				t.Fatalf("domain %q accepted", d)
			}
		}
	})
}

func ExampleParse() {
	c, err := config.Parse([]byte("PUBLIC_URL: https://relay.example\n"), "/etc/relay/config.yml", nil, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.ActorURL(), c.ActorKey)
	// Output: https://relay.example/actor /etc/relay/data/actor.pem
}

func ExampleLoad() {
	c, err := config.Load("config.yml", nil, &config.LoadOpts{Strict: true})
	if err != nil {
		fmt.Println("invalid:", err)
		return
	}
	fmt.Println(c.ActorURL())
}

func ExampleFromEnv() {
	env := map[string]string{"PUBLIC_URL": "https://relay.example"}
	c, _ := config.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, nil)
	fmt.Println(c.KeyID())
	// Output: https://relay.example/actor#main-key
}

func TestMetricsListen(t *testing.T) {
	for _, tc := range []struct {
		name, yml string
		want      string // "" for valid
	}{
		{"unset", "", ""},
		{"own address", "METRICS_LISTEN: 127.0.0.1:9464\n", ""},
		{"no port", "METRICS_LISTEN: 127.0.0.1\n", "METRICS_LISTEN: must be host:port"},
		{"bad port", "METRICS_LISTEN: 127.0.0.1:99999\n", "METRICS_LISTEN: port must be"},
		{"same as LISTEN", "LISTEN: 127.0.0.1:8080\nMETRICS_LISTEN: 127.0.0.1:8080\n", "METRICS_LISTEN: must differ from LISTEN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Parse([]byte(tc.yml), filepath.Join(t.TempDir(), "config.yml"), nil, nil)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(tc.yml, c.MetricsListen) {
					t.Errorf("MetricsListen = %q", c.MetricsListen)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want %q", err, tc.want)
			}
		})
	}
	c, err := config.FromEnv(func(k string) (string, bool) {
		if k == "METRICS_LISTEN" {
			return "127.0.0.1:9464", true
		}
		return "", false
	}, nil)
	if err != nil || c.MetricsListen != "127.0.0.1:9464" {
		t.Fatalf("from the environment: %+v, %v", c, err)
	}
}
