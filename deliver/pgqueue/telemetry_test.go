package pgqueue_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/internal/pgtest"
)

// TestTraceContextCrossesTheQueue: a send queued by one Deliverer with its
// own tracer, and delivered by another on its own pool (as another process
// would), gives an attempt span linked to the span that queued it.
func TestTraceContextCrossesTheQueue(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) }))
	t.Cleanup(srv.Close)
	cs := pgtest.ConnString(t)
	q := openQueue(t, cs, nil)
	producerSpans, consumerSpans := tracetest.NewSpanRecorder(), tracetest.NewSpanRecorder()
	producerTP := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(producerSpans))
	consumerTP := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(consumerSpans))
	t.Cleanup(func() { _ = producerTP.Shutdown(context.Background()); _ = consumerTP.Shutdown(context.Background()) })

	producer, err := deliver.New(q, staticKeys{}, testClient(t), &deliver.Config{TracerProvider: producerTP})
	if err != nil {
		t.Fatal(err)
	}
	ctx, app := producerTP.Tracer("app").Start(context.Background(), "app.post")
	body := []byte(`{"id":"https://a.example/activities/1","type":"Create","actor":"https://a.example/users/alice"}`)
	if err := producer.Send(ctx, keyID, body, []string{srv.URL + "/inbox"}); err != nil {
		t.Fatal(err)
	}
	app.End()

	consumer, err := deliver.New(openQueue(t, cs, nil), staticKeys{}, testClient(t), &deliver.Config{TracerProvider: consumerTP})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := consumer.RunDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("RunDue: %d, %v; want 1 delivery", n, err)
	}
	var enqueue sdktrace.ReadOnlySpan
	for _, s := range producerSpans.Ended() {
		if s.Name() == "deliver.enqueue" {
			enqueue = s
		}
	}
	if enqueue == nil {
		t.Fatal("no deliver.enqueue span")
	}
	ended := consumerSpans.Ended()
	if len(ended) != 1 || ended[0].Name() != "deliver.attempt" {
		t.Fatalf("consumer spans %v; want one deliver.attempt", ended)
	}
	links := ended[0].Links()
	if len(links) != 1 || !links[0].SpanContext.Equal(enqueue.SpanContext().WithRemote(true)) {
		t.Errorf("deliver.attempt links %v; want one to deliver.enqueue %v", links, enqueue.SpanContext())
	}
}
