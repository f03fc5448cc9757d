package main

import (
	"slices"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name    string
		argv    []string
		want    args
		wantErr bool
	}{
		{name: "none", argv: nil, want: args{configPath: "config.yml"}},
		{name: "config first", argv: []string{"-c", "f.yml", "directory", "status"},
			want: args{configPath: "f.yml", configSet: true, words: []string{"directory", "status"}}},
		{name: "config last", argv: []string{"directory", "sync", "https://d.example", "--config=f.yml"},
			want: args{configPath: "f.yml", configSet: true, words: []string{"directory", "sync", "https://d.example"}}},
		{name: "test config", argv: []string{"-t", "-c", "x", "--strict"}, want: args{configPath: "x", configSet: true, testConfig: true, strict: true}},
		{name: "long test config", argv: []string{"--test-config"}, want: args{configPath: "config.yml", testConfig: true}},
		{name: "unregister flags", argv: []string{"directory", "unregister", "o", "--remove", "--acknowledge-external-disable"},
			want: args{configPath: "config.yml", remove: true, ackExt: true, words: []string{"directory", "unregister", "o"}}},
		{name: "missing file", argv: []string{"-c"}, wantErr: true},
		{name: "unknown flag", argv: []string{"--verbose"}, wantErr: true},
		{name: "help", argv: []string{"-h"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseArgs(tt.argv)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("parsed %+v; want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.configPath != tt.want.configPath || got.configSet != tt.want.configSet || got.testConfig != tt.want.testConfig ||
				got.strict != tt.want.strict || got.remove != tt.want.remove || got.ackExt != tt.want.ackExt || !slices.Equal(got.words, tt.want.words) {
				t.Fatalf("got %+v; want %+v", got, tt.want)
			}
		})
	}
}

func TestUsageExitCodes(t *testing.T) {
	for _, argv := range [][]string{{"bogus"}, {"server", "extra"}, {"-t", "server"}, {"--strict"}, {"--remove"}} {
		e, _, _ := testEnv(t)
		if code := run(t.Context(), argv, e); code != exitUsage {
			t.Errorf("relay %v: exit %d; want %d", argv, code, exitUsage)
		}
	}
	e, out, _ := testEnv(t)
	if code := run(t.Context(), []string{"--help"}, e); code != exitOK || !strings.Contains(out.String(), "directory unregister") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}

func FuzzParseArgs(f *testing.F) {
	f.Add("-c\x00f.yml\x00directory\x00status")
	f.Add("-t\x00--strict")
	f.Add("directory\x00unregister\x00https://d.example\x00--remove")
	f.Add("--config=\x00-")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := parseArgs(strings.Split(s, "\x00"))
		if err != nil {
			return
		}
		for _, w := range a.words {
			if strings.HasPrefix(w, "-") && w != "-" {
				t.Fatalf("flag %q taken as a word", w)
			}
		}
	})
}
