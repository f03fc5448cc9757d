package relay

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
)

// The status page lists the availability store's unavailable hosts with
// their subscribers; a signed activity from a host sees it alive.
func TestAvailabilityOnStatusAndInbox(t *testing.T) {
	// The peers sign with the real clock, so the failures are dated
	// relative to it; the store judges by the times it is given only.
	now := time.Now()
	av := deliver.NewMemoryAvailabilityStore(0)
	rule := driver.AvailabilityRule{Days: 2}
	for _, h := range []string{"a.example", "b.example"} {
		for d := range 2 {
			if _, _, err := av.Failure(context.Background(), h, now.Add(time.Duration(d-3)*24*time.Hour), rule); err != nil {
				t.Fatal(err)
			}
		}
	}
	f := newFixture(t, func(c *Config) { c.Availability = av })
	if err := f.store.Put(context.Background(), subscriberA(f.peers["a"])); err != nil {
		t.Fatal(err)
	}
	rep := f.r.Report(context.Background())
	if len(rep.Unavailable) != 2 || rep.Unavailable[0].Host != "a.example" || rep.Unavailable[0].Subscribers != 1 ||
		rep.Unavailable[1].Subscribers != 0 {
		t.Fatalf("unavailable rows %+v", rep.Unavailable)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/admin/status?token=admin-token-0123456789", nil)
	w := httptest.NewRecorder()
	f.r.Handler().ServeHTTP(w, req)
	if !strings.Contains(w.Body.String(), `data-host="a.example"`) || !strings.Contains(w.Body.String(), "Unavailable hosts") {
		t.Fatalf("status page lacks the unavailable hosts:\n%s", w.Body.String())
	}

	// b is not subscribed (403), but its signature holds: it is alive.
	if w := f.create("b", "1"); w.Code == http.StatusUnauthorized {
		t.Fatalf("create from b: %d %s", w.Code, w.Body)
	}
	if _, down, _ := av.Unavailable(context.Background(), "b.example"); down {
		t.Fatal("b.example still unavailable after its signed activity arrived")
	}
	if _, down, _ := av.Unavailable(context.Background(), "a.example"); !down {
		t.Fatal("a.example seen alive without a word from it")
	}
}
