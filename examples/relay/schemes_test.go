package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fedkit/fedkit/examples/relay/internal/config"
	"github.com/fedkit/fedkit/internal/pgtest"
	"github.com/fedkit/fedkit/sig"
)

// With Redis or Postgres, the scheme memory (and when each scheme was
// learned, for the re-probe) outlives the process: a restarted relay reads
// what the first one learned.
func TestSchemeMemorySurvivesRestart(t *testing.T) {
	t.Run("redis", func(t *testing.T) { testSchemeMemorySurvives(t, sharedBackends(t)) })
	t.Run("postgres only", func(t *testing.T) {
		testSchemeMemorySurvives(t, fmt.Sprintf("POSTGRES_URL: %q\n", pgtest.ConnString(t)))
	})
}

func testSchemeMemorySurvives(t *testing.T, backends string) {
	ctx := context.Background()
	p := serverConfig(t, "PUBLIC_URL: https://relay.example\nDATA_DIR: .\n"+backends)
	cfg, err := config.Load(p, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, _, _ := testEnv(t)
	first, err := openApp(ctx, cfg, e, false)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2031, 7, 1, 12, 0, 0, 0, time.UTC)
	if err := first.schemes.Learn(ctx, "mastodon.example", sig.LearnedScheme{Scheme: sig.SchemeRFC9421, Learned: at}); err != nil {
		t.Fatal(err)
	}
	first.close()
	second, err := openApp(ctx, cfg, e, false)
	if err != nil {
		t.Fatal(err)
	}
	defer second.close()
	l, ok, err := second.schemes.Learned(ctx, "mastodon.example")
	if err != nil || !ok || l.Scheme != sig.SchemeRFC9421 || !l.Learned.Equal(at) {
		t.Fatalf("after the restart: %+v, %v, %v", l, ok, err)
	}
}
