package deliver_test

import (
	"errors"
	"net/http"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
)

// A send while the queue's database is away stores nothing and matches
// driver.ErrQueueUnavailable: the application asks its client to retry
// rather than report a failure.
func ExampleDeliverer_Send_queueUnavailable() {
	var d *deliver.Deliverer // from deliver.New, on a pgqueue.Queue
	http.HandleFunc("POST /outbox", func(w http.ResponseWriter, r *http.Request) {
		create := []byte(`{"id":"https://a.example/activities/1","type":"Create","actor":"https://a.example/users/alice"}`)
		err := d.Send(r.Context(), "https://a.example/users/alice#main-key", create, []string{"https://b.example/inbox"})
		switch {
		case errors.Is(err, driver.ErrQueueUnavailable):
			w.Header().Set("Retry-After", "5")
			http.Error(w, "try again shortly", http.StatusServiceUnavailable)
		case err != nil:
			http.Error(w, "not sent", http.StatusInternalServerError)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
}
