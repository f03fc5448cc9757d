package directory

import (
	"regexp"
	"slices"
)

// StatusPath is the status document's route, the same for every version.
const StatusPath = "/v1/status"

// StatusService is the only accepted status "service" value.
const StatusService = "activity-relay-directory"

// maxStatusVersions bounds schema 4's lifecycle_protocol_versions.
const maxStatusVersions = 8

var softwareVersionRE = regexp.MustCompile(`^[A-Za-z0-9._+~-]{1,64}$`)

// Status is a strictly validated public Directory status document
// (schemas 2, 3 and 4).
type Status struct {
	// SchemaVersion is 2, 3 or 4.
	SchemaVersion int
	// Service is always "activity-relay-directory".
	Service string
	// Version is the Directory software version, [A-Za-z0-9._+~-]{1,64}.
	Version string
	// PublicBaseURL equals the configured origin exactly.
	PublicBaseURL string
	// LifecycleEnabled is what the Directory's configuration requests;
	// LifecycleAvailable whether its lifecycle service was actually built.
	LifecycleEnabled   bool
	LifecycleAvailable bool
	// EnrollmentOpen reports whether a never-seen relay may register.
	EnrollmentOpen bool
	// PublicListingEnabled and PublicListingAvailable are false in schema 2,
	// which does not carry them.
	PublicListingEnabled   bool
	PublicListingAvailable bool
	// LifecycleProtocolVersions is schema 4's ordered capability list; nil
	// for schemas 2 and 3, which mean v1 only.
	LifecycleProtocolVersions []Version
}

// ParseStatus strictly decodes a status document and checks it against
// the configured origin: known schema, exact key set for that schema (no
// unknown, missing or duplicate names, no trailing data), the fixed service
// name, a bounded software version, public_base_url equal to origin, and
// for schema 4 a non-empty, strictly increasing version list of at most 8
// entries containing 1. Errors are *InvalidResponseError.
func ParseStatus(body []byte, origin string) (*Status, error) {
	s, r := parseStatus(body, origin)
	if r != "" {
		return nil, &InvalidResponseError{StatusCode: 200, Reason: r}
	}
	return s, nil
}

func parseStatus(body []byte, origin string) (*Status, Reason) {
	f, err := decodeObject(body)
	if err != nil {
		return nil, reasonOf(err)
	}
	schema, err := f.integer("schema_version")
	if err != nil {
		return nil, ReasonStatusDoc
	}
	keys := []string{"schema_version", "service", "version", "public_base_url",
		"lifecycle_enabled", "lifecycle_available", "enrollment_open"}
	switch schema {
	case 2:
	case 3:
		keys = append(keys, "public_listing_enabled", "public_listing_available")
	case 4:
		keys = append(keys, "public_listing_enabled", "public_listing_available", "lifecycle_protocol_versions")
	default:
		return nil, ReasonStatusDoc
	}
	if err := f.only(keys...); err != nil {
		return nil, reasonOf(err)
	}
	s := &Status{SchemaVersion: int(schema)}
	var errs []error
	str := func(k string) string { v, err := f.str(k); errs = append(errs, err); return v }
	boolean := func(k string) bool { v, err := f.boolean(k); errs = append(errs, err); return v }
	s.Service = str("service")
	s.Version = str("version")
	s.PublicBaseURL = str("public_base_url")
	s.LifecycleEnabled = boolean("lifecycle_enabled")
	s.LifecycleAvailable = boolean("lifecycle_available")
	s.EnrollmentOpen = boolean("enrollment_open")
	if schema >= 3 {
		s.PublicListingEnabled = boolean("public_listing_enabled")
		s.PublicListingAvailable = boolean("public_listing_available")
	}
	for _, err := range errs {
		if err != nil {
			return nil, ReasonStatusDoc
		}
	}
	if s.Service != StatusService || !softwareVersionRE.MatchString(s.Version) {
		return nil, ReasonStatusDoc
	}
	if s.PublicBaseURL != origin {
		return nil, ReasonStatusBaseURL
	}
	if schema == 4 {
		vs, err := f.intArray("lifecycle_protocol_versions")
		if err != nil || len(vs) == 0 || len(vs) > maxStatusVersions {
			return nil, ReasonStatusDoc
		}
		for i, v := range vs {
			if v < 1 || (i > 0 && v <= vs[i-1]) {
				return nil, ReasonStatusDoc
			}
			s.LifecycleProtocolVersions = append(s.LifecycleProtocolVersions, Version(v))
		}
		if vs[0] != 1 {
			return nil, ReasonStatusDoc
		}
	}
	return s, ""
}

// Versions returns the advertised lifecycle versions: [1] for schemas 2
// and 3, the explicit list for schema 4.
func (s *Status) Versions() []Version {
	if s.SchemaVersion < 4 {
		return []Version{V1}
	}
	return slices.Clone(s.LifecycleProtocolVersions)
}

// Advertises reports whether the Directory explicitly offers version v.
func (s *Status) Advertises(v Version) bool { return slices.Contains(s.Versions(), v) }

// Negotiate returns the highest version both advertised and implemented.
// Only an explicit advertisement counts; absence of a valid document is
// never a reason to fall back, which is why there is no Status to call
// this on after a failure.
func (s *Status) Negotiate() Version {
	best := V1
	for _, v := range s.Versions() {
		if v.Valid() && v > best {
			best = v
		}
	}
	return best
}
