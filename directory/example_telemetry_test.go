package directory_test

import (
	"context"
	"crypto"
	"fmt"
	"log"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fedkit/fedkit/directory"
	"github.com/fedkit/fedkit/directory/directorytest"
	"github.com/fedkit/fedkit/sig"
)

// An application hands its OpenTelemetry providers to the Client (and the
// SchedulerConfig); left nil, OTel's global ones are used. Here the SDK
// records spans in memory.
func ExampleConfig_telemetry() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())

	key, _ := sig.ParsePrivateKeyPEM(mustRead("../testdata/directory/testKey.TEST-ONLY.pem"))
	d := directorytest.New(&directorytest.Config{EnrollmentOpen: true,
		Keys: map[string]crypto.PublicKey{"https://relay.example/actor#main-key": key.Public()}})
	c, err := directory.New(key, &directory.Config{
		Actor:          "https://relay.example/actor",
		PublicBaseURL:  "https://relay.example",
		Directories:    []directory.Entry{{Origin: d.Origin(), Enabled: true}},
		HTTP:           d.Doer(),
		TracerProvider: tp,
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.Sync(context.Background(), d.Origin(), nil); err != nil {
		log.Fatal(err)
	}
	for _, s := range rec.Ended() {
		fmt.Println(s.Name(), s.SpanKind())
	}
	// Output:
	// GET client
	// POST client
	// directory.register internal
	// directory.sync internal
}
