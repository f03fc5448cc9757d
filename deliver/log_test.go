package deliver_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/fedkit/fedkit/deliver"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestAttemptsLoggedAtDebug(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	b := setup(t, func(c *deliver.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	ib := newInbox(t, b.clock, status(410))
	b.send(t, "1", ib.URL("/inbox"))
	b.runDue(t)
	out := buf.String()
	for _, want := range []string{"deliver: attempt", "inbox=" + ib.URL("/inbox"), "status=410", "outcome=refused", "scheme=rfc9421", "deliver: refused for good"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}
