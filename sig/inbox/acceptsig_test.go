package inbox_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/inbox"
)

// A refusal of the signature carries Accept-Signature saying what the
// inbox accepts, and a sender signing as it asks is accepted; a refusal of
// the body carries none.
func TestInboxAcceptSignature(t *testing.T) {
	t.Parallel()
	alice := newPeer(t, "https://a.example/users/alice")
	rc := &recv{}
	h, err := inbox.New(newKeyring(alice), rc.receive, nil)
	if err != nil {
		t.Fatal(err)
	}
	body := create(alice.actor, alice.actor+"/1")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, post(t, nil, body))
	as, err := sig.ParseAcceptSignature(w.Result().Header)
	if w.Code != http.StatusUnauthorized || err != nil || len(as) != 1 {
		t.Fatalf("unsigned: status %d, Accept-Signature %q (%v)", w.Code, w.Header().Get("Accept-Signature"), err)
	}
	for _, c := range []string{"@method", "@target-uri", "@authority", "content-digest"} {
		if !as[0].Covers(c) {
			t.Fatalf("Accept-Signature %q does not ask for %s", as[0].String(), c)
		}
	}
	if !as[0].Created {
		t.Fatalf("Accept-Signature %q does not ask for created", as[0].String())
	}

	req := post(t, nil, body)
	if err := alice.signer.SignAccepted(req, &as[0]); err != nil {
		t.Fatal(err)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusAccepted {
		t.Fatalf("signed as asked: status %d", w.Code)
	}

	w = httptest.NewRecorder()
	h.ServeHTTP(w, post(t, alice.signer, "[]"))
	if w.Code != http.StatusBadRequest || w.Header().Get("Accept-Signature") != "" {
		t.Fatalf("not an activity: status %d, Accept-Signature %q", w.Code, w.Header().Get("Accept-Signature"))
	}
}
