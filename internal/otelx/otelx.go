package otelx

import (
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope prefix: each package's tracer and
// meter are named ScopeName + "/" + package path, e.g.
// "github.com/fedkit/fedkit/directory".
const ScopeName = "github.com/fedkit/fedkit"

// OpenTelemetry semantic-convention attribute keys (HTTP, server, error).
const (
	HTTPRequestMethod      = attribute.Key("http.request.method")
	HTTPResponseStatusCode = attribute.Key("http.response.status_code")
	HTTPRequestResendCount = attribute.Key("http.request.resend_count")
	ServerAddress          = attribute.Key("server.address")
	ServerPort             = attribute.Key("server.port")
	URLFull                = attribute.Key("url.full")
	ErrorType              = attribute.Key("error.type")
)

// ActivityPub attribute keys, named as Fedify names them.
const (
	ActivityPubActivityID      = attribute.Key("activitypub.activity.id")
	ActivityPubActivityType    = attribute.Key("activitypub.activity.type")
	ActivityPubActivityTo      = attribute.Key("activitypub.activity.to")
	ActivityPubActivityCC      = attribute.Key("activitypub.activity.cc")
	ActivityPubActivityRetries = attribute.Key("activitypub.activity.retries")
	ActivityPubActorID         = attribute.Key("activitypub.actor.id")
	ActivityPubActorType       = attribute.Key("activitypub.actor.type")
	ActivityPubObjectID        = attribute.Key("activitypub.object.id")
	ActivityPubObjectType      = attribute.Key("activitypub.object.type")
	ActivityPubInboxes         = attribute.Key("activitypub.inboxes")
	ActivityPubSharedInbox     = attribute.Key("activitypub.shared_inbox")
	HTTPSignaturesKeyID        = attribute.Key("http_signatures.key_id")
	HTTPSignaturesAlgorithm    = attribute.Key("http_signatures.algorithm")
	HTTPSignaturesVerified     = attribute.Key("http_signatures.verified")
	WebFingerResource          = attribute.Key("webfinger.resource")
)

// Providers are the two providers a package's Config carries.
type Providers struct {
	Tracer trace.TracerProvider
	Meter  metric.MeterProvider
}

// Instruments returns the tracer and meter of the package pkg (its path
// below the module, e.g. "directory"), from the given providers or, where
// nil, OTel's global ones: no-ops until the application installs its own.
// The global providers are read here, at construction, as every OTel
// instrumentation library does.
func Instruments(pkg string, p Providers) (trace.Tracer, metric.Meter) {
	tp, mp := p.Tracer, p.Meter
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	name := ScopeName + "/" + pkg
	return tp.Tracer(name), mp.Meter(name)
}

// HTTPClient returns the semantic-convention attributes of an outgoing
// request to u: http.request.method, server.address, server.port (the
// scheme's default when u has none) and url.full with any userinfo and
// query left out, so no credential or token reaches a span.
func HTTPClient(method string, u *url.URL) []attribute.KeyValue {
	port := 443
	if u.Scheme == "http" {
		port = 80
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err == nil {
			port = n
		}
	}
	full := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return []attribute.KeyValue{
		HTTPRequestMethod.String(method),
		ServerAddress.String(u.Hostname()),
		ServerPort.Int(port),
		URLFull.String(full.String()),
	}
}
