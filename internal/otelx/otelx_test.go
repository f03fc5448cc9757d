package otelx

import (
	"net/url"
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

func TestHTTPClient(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		host      string
		port      int
		full      string
	}{
		{"https default port", "https://dir.example/v1/status", "dir.example", 443, "https://dir.example/v1/status"},
		{"http default port", "http://127.0.0.1/x", "127.0.0.1", 80, "http://127.0.0.1/x"},
		{"explicit port", "https://dir.example:8443/v3/relays/register", "dir.example", 8443, "https://dir.example:8443/v3/relays/register"},
		{"credentials and query dropped", "https://user:pw@dir.example/p?token=secret", "dir.example", 443, "https://dir.example/p"},
		{"IPv6", "https://[::1]:9000/", "::1", 9000, "https://[::1]:9000/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := url.Parse(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			got := attribute.NewSet(HTTPClient("POST", u)...)
			want := attribute.NewSet(HTTPRequestMethod.String("POST"), ServerAddress.String(tc.host),
				ServerPort.Int(tc.port), URLFull.String(tc.full))
			if !got.Equals(&want) {
				t.Errorf("attributes = %v; want %v", got.ToSlice(), want.ToSlice())
			}
		})
	}
}
