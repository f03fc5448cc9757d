package xrpc

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/examples/appview/internal/store"
)

// These cases are refused before the store is touched, so a store with no
// database is enough; resolution against Postgres is tested in package main.
func TestRefusedBeforeAnyQuery(t *testing.T) {
	t.Parallel()
	srv := New(store.New(nil), nil)
	tests := []struct {
		name, path string
		status     int
		errName    string
	}{
		{"unknown method", "/xrpc/dev.fedkit.nothing", 404, ErrMethodNotFound},
		{"limit zero", "/xrpc/" + MethodGetPosts + "?actor=did:plc:aaaaaaaaaaaaaaaaaaaaaaaa&limit=0", 400, ErrInvalidRequest},
		{"limit too big", "/xrpc/" + MethodGetPosts + "?actor=did:plc:aaaaaaaaaaaaaaaaaaaaaaaa&limit=101", 400, ErrInvalidRequest},
		{"bad cursor", "/xrpc/" + MethodGetPosts + "?actor=did:plc:aaaaaaaaaaaaaaaaaaaaaaaa&cursor=yesterday", 400, ErrInvalidRequest},
		{"missing actor", "/xrpc/" + MethodGetProfile, 400, ErrInvalidRequest},
		{"name with RLO", "/xrpc/" + MethodResolveActor + "?actor=a%E2%80%AEb@lemmy.world", 400, ErrInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			var body map[string]string
			if err := json.NewDecoder(rec.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if rec.Code != tt.status || body["error"] != tt.errName || body["message"] == "" {
				t.Fatalf("%d %v, want %d %s", rec.Code, body, tt.status, tt.errName)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
		})
	}
}

func ExampleNew() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://127.0.0.1:5432/appview")
	if err != nil {
		panic(err)
	}
	defer pool.Close()
	srv := &http.Server{
		Addr:              "127.0.0.1:8080",
		Handler:           New(store.New(pool), slog.Default()),
		ReadHeaderTimeout: 10 * time.Second,
	}
	_ = srv.ListenAndServe() // GET /xrpc/dev.fedkit.appview.actor.getProfile?actor=@alice@lemmy.world
}
