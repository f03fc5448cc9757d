package relay

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/sig"
)

// TestInboxRefusals: what the relay answers for each activity its inbox
// (sig/inbox) refuses, and that none of them is relayed. An inbox.Handler
// on its own answers an activity signed by another than its actor 202 and
// drops it, and takes a gone actor's Delete of itself unsigned; the relay
// relays only what its actor's key signed, and says 401 to the rest.
func TestInboxRefusals(t *testing.T) {
	create := func(actor string) []byte {
		b, _ := json.Marshal(map[string]any{"id": "https://a.example/notes/9/activity", "type": "Create", "actor": actor,
			"to": []string{Public}, "object": map[string]any{"id": "https://a.example/notes/9", "type": "Note"}})
		return b
	}
	tests := []struct {
		name     string
		mod      func(*Config)
		signer   string // a peer's name; "" sends it unsigned
		body     []byte
		gone     bool // the signer's actor answers 410
		wantCode int
		wantText string
	}{
		{name: "unsigned", body: create("https://a.example/actor"), wantCode: http.StatusUnauthorized, wantText: "signature refused"},
		{name: "signed by another server's actor", signer: "b", body: create("https://a.example/actor"),
			wantCode: http.StatusUnauthorized, wantText: "signer is not the activity's actor"},
		{name: "not an activity", signer: "a", body: []byte(`{"hello":"world"}`), wantCode: http.StatusBadRequest, wantText: "not a JSON activity"},
		{name: "not JSON", signer: "a", body: []byte(`<html>`), wantCode: http.StatusBadRequest, wantText: "not a JSON activity"},
		{name: "body over MaxInboxBytes", mod: func(c *Config) { c.MaxInboxBytes = 1 << 10 }, signer: "a",
			body:     []byte(`{"type":"Create","actor":"https://a.example/actor","content":"` + strings.Repeat("x", 1<<10) + `"}`),
			wantCode: http.StatusRequestEntityTooLarge, wantText: "body too large"},
		{name: "key on a blocked domain", mod: func(c *Config) { c.Blocked = []string{"a.example"} }, signer: "a",
			body: create("https://a.example/actor"), wantCode: http.StatusForbidden, wantText: "domain not allowed"},
		{name: "gone actor's Delete of itself", signer: "a", gone: true,
			body:     []byte(`{"id":"https://a.example/actor#delete","type":"Delete","actor":"https://a.example/actor","object":"https://a.example/actor","to":["` + Public + `"]}`),
			wantCode: http.StatusUnauthorized, wantText: "signature refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.mod)
			f.subscribe("c", Public)
			f.send.take()
			if tt.gone {
				f.look.mu.Lock()
				f.look.gone = map[string]bool{f.peers[tt.signer].actor: true}
				f.look.mu.Unlock()
			}
			req := httptest.NewRequest(http.MethodPost, base+"/inbox", bytes.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/activity+json")
			if tt.signer != "" {
				if err := f.peers[tt.signer].signer.Sign(req, sig.SchemeCavage); err != nil {
					t.Fatal(err)
				}
			}
			w := httptest.NewRecorder()
			f.r.Handler().ServeHTTP(w, req)
			if w.Code != tt.wantCode || strings.TrimSpace(w.Body.String()) != tt.wantText {
				t.Fatalf("answer %d %q; want %d %q", w.Code, strings.TrimSpace(w.Body.String()), tt.wantCode, tt.wantText)
			}
			if got := f.send.take(); len(got) != 0 {
				t.Fatalf("relayed %d sends; want none", len(got))
			}
		})
	}
}
