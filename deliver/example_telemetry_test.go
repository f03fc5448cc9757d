package deliver_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"net/netip"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
)

// An application hands its OpenTelemetry providers to the Deliverer; left
// nil, OTel's global ones are used. The span around a Send is linked from
// each delivery attempt, wherever the queue hands the job out. Here the SDK
// records spans in memory.
func ExampleConfig_telemetry() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())

	inbox := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) }))
	defer inbox.Close()
	// A client for this example's loopback inbox only.
	c, err := client.New(&client.Config{AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	if err != nil {
		log.Fatal(err)
	}
	d, err := deliver.New(&deliver.MemoryQueue{}, appKeys{}, c, &deliver.Config{TracerProvider: tp})
	if err != nil {
		log.Fatal(err)
	}
	ctx, span := tp.Tracer("app").Start(context.Background(), "post a note")
	err = d.Send(ctx, testKeyID, []byte(`{"id":"https://a.example/activities/1","type":"Create","actor":"https://a.example/users/alice"}`),
		[]string{inbox.URL + "/inbox"})
	span.End()
	if err != nil {
		log.Fatal(err)
	}
	if _, err := d.RunDue(context.Background()); err != nil {
		log.Fatal(err)
	}
	for _, s := range rec.Ended() {
		fmt.Println(s.Name(), len(s.Links()))
	}
	// Output:
	// deliver.enqueue 0
	// post a note 0
	// deliver.attempt 1
}
