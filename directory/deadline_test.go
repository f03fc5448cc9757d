package directory_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fedkit/fedkit/directory"
)

// TestDeadlineCappedAt15s: a longer or zero configured timeout is capped
// to the 15 s overall budget per request.
func TestDeadlineCappedAt15s(t *testing.T) {
	for _, timeout := range []time.Duration{0, time.Hour, 5 * time.Second} {
		t.Run(timeout.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				hang := doerFunc(func(r *http.Request) (*http.Response, error) {
					<-r.Context().Done()
					return nil, r.Context().Err()
				})
				c, err := directory.New(testKey(t), &directory.Config{Actor: actor, PublicBaseURL: base,
					Directories: enabled(dirO), HTTP: hang, Timeout: timeout, MaxAttempts: 1})
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				_, err = c.Register(context.Background(), dirO, &directory.CallOpts{Version: directory.V1})
				var te *directory.TransportError
				if !errors.As(err, &te) || !te.Timeout {
					t.Fatal(err)
				}
				want := timeout
				if timeout == 0 || timeout > 15*time.Second {
					want = 15 * time.Second
				}
				if got := time.Since(start); got != want {
					t.Fatalf("deadline after %v, want %v", got, want)
				}
			})
		})
	}
}

// TestHeaderBound: response headers beyond 64 KiB are refused by the
// transport, not read into memory.
func TestHeaderBound(t *testing.T) {
	c, origin, _ := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Padding", strings.Repeat("p", 70<<10))
		success(w, "")
	})
	_, err := c.Register(context.Background(), origin, &directory.CallOpts{Version: directory.V1})
	if !errors.Is(err, directory.ErrTransport) {
		t.Fatalf("%v", err)
	}
}

// TestBodyReadAtMostCapPlusOne: a Doer that hands back an endless body is
// read only to the cap plus one byte.
func TestBodyReadAtMostCapPlusOne(t *testing.T) {
	var read int64
	endless := doerFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(&counting{n: &read}), Request: r, ContentLength: -1}, nil
	})
	c, err := directory.New(testKey(t), &directory.Config{Actor: actor, PublicBaseURL: base,
		Directories: enabled(dirO), HTTP: endless})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Register(context.Background(), dirO, &directory.CallOpts{Version: directory.V1})
	if !errors.Is(err, directory.ErrResponseTooLarge) || read > directory.MaxResponseBytes+1+512 {
		t.Fatalf("%v after reading %d bytes", err, read)
	}
}

type counting struct{ n *int64 }

func (c *counting) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	*c.n += int64(len(p))
	return len(p), nil
}

// TestKeyIDRules: a whitespace or empty-fragment keyid is refused; an
// unset one defaults to actor#main-key.
func TestKeyIDRules(t *testing.T) {
	for _, id := range []string{" ", "\t" + keyID, keyID + "\n", actor + "#"} {
		if _, err := directory.New(testKey(t), &directory.Config{Actor: actor, PublicBaseURL: base, KeyID: id}); !errors.Is(err, directory.ErrConfig) {
			t.Errorf("keyid %q accepted", id)
		}
	}
	small, _ := rsa.GenerateKey(rand.Reader, 2040)
	if _, err := directory.New(small, &directory.Config{Actor: actor, PublicBaseURL: base}); !errors.Is(err, directory.ErrConfig) {
		t.Error("2040-bit key accepted")
	}
}
