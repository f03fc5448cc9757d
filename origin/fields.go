package origin

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Limits of the origin fields, all in UTF-8 bytes because atproto lexicon
// maxLength values count bytes.
const (
	MaxUsernameBytes = 256
	MaxURLBytes      = 2048
	MaxSoftwareBytes = 64
)

// Fields are the fediverse origin fields of a bridged profile, as a record
// asserts them or as they are stored: the origin domain ("lemmy.world"),
// the user name there ("alice"), the profile URL on the origin and the
// origin's software ("lemmy"). An empty string is an absent field.
type Fields struct {
	// Origin is the origin domain ("lemmy.world").
	Origin string
	// Username is the user name on the origin ("alice").
	Username string
	// URL is the profile URL on the origin.
	URL string
	// Software is the origin's software ("lemmy").
	Software string
}

// IsZero reports whether no field is set.
func (f Fields) IsZero() bool { return f == Fields{} }

// Field names a field in a Rejection.
type Field string

// The fields, as they appear in Rejection.Field.
const (
	FieldOrigin   Field = "origin"
	FieldUsername Field = "originUsername"
	FieldURL      Field = "originUrl"
	FieldSoftware Field = "originSoftware"
)

// RejectReason is a closed code saying why Sanitize dropped a field. Log it
// instead of the value, which an untrusted record supplied.
type RejectReason string

// Reasons Sanitize drops a field.
const (
	RejectInvalidDomain   RejectReason = "invalid-domain"
	RejectNoUsername      RejectReason = "no-username"
	RejectNoOrigin        RejectReason = "no-origin"
	RejectEmpty           RejectReason = "empty"
	RejectTooLong         RejectReason = "too-long"
	RejectInvalidUTF8     RejectReason = "invalid-utf8"
	RejectBadCharacter    RejectReason = "bad-character"
	RejectNotHTTPS        RejectReason = "not-https"
	RejectUserinfo        RejectReason = "userinfo"
	RejectHostMismatch    RejectReason = "host-mismatch"
	RejectInvalidURI      RejectReason = "invalid-uri"
	RejectInvalidSoftware RejectReason = "invalid-software"
)

// Rejection records one asserted field that Sanitize dropped.
type Rejection struct {
	// Field is the field dropped.
	Field Field
	// Reason says why.
	Reason RejectReason
}

// Sanitize applies the origin-field rules and returns the fields that
// survive, with a Rejection for every asserted (non-empty) field dropped.
// It drops fields, never the whole record:
//
//   - Origin is normalised with NormalizeDomain and kept only together with a
//     username that survives its own rules.
//   - Username is NFC-normalised, stripped of control (Cc) and format (Cf)
//     characters (bidi overrides and isolates, zero-width characters, soft
//     hyphen, BOM), NFC-normalised again, and must then be non-empty, at
//     most MaxUsernameBytes, free of whitespace, '@', '/' and ':', and
//     accompanied by a valid origin.
//   - URL must be https, at most MaxURLBytes, printable ASCII (atproto URI
//     syntax), without userinfo or port, with a host equal to the kept origin.
//   - Software is trimmed and lower-cased, then must match [a-z0-9._-]{1,64}.
//
// Sanitize is idempotent: sanitising its output changes nothing.
func Sanitize(in Fields) (Fields, []Rejection) {
	var out Fields
	var rej []Rejection
	drop := func(f Field, r RejectReason) { rej = append(rej, Rejection{f, r}) }

	origin, originReason := "", RejectReason("")
	if in.Origin != "" {
		d, err := NormalizeDomain(in.Origin)
		if err != nil {
			originReason = RejectInvalidDomain
		} else {
			origin = d
		}
	}
	user, userReason := "", RejectReason("")
	if in.Username != "" {
		user, userReason = SanitizeUsername(in.Username)
	}
	switch {
	case origin != "" && user != "":
		out.Origin, out.Username = origin, user
	default:
		// A name without its server is no address, and a server without a
		// name is no account: keep both or neither.
		if in.Origin != "" {
			if originReason == "" {
				originReason = RejectNoUsername
			}
			drop(FieldOrigin, originReason)
		}
		if in.Username != "" {
			if userReason == "" {
				userReason = RejectNoOrigin
			}
			drop(FieldUsername, userReason)
		}
	}

	if in.URL != "" {
		if r := checkOriginURL(in.URL, out.Origin); r != "" {
			drop(FieldURL, r)
		} else {
			out.URL = in.URL
		}
	}

	if in.Software != "" {
		if s, ok := SanitizeSoftware(in.Software); ok {
			out.Software = s
		} else {
			drop(FieldSoftware, RejectInvalidSoftware)
		}
	}
	return out, rej
}

// SanitizeUsername applies the username rules of Sanitize on its own. It
// returns the cleaned name, or "" and the reason it was refused.
func SanitizeUsername(s string) (string, RejectReason) {
	if !utf8.ValidString(s) {
		return "", RejectInvalidUTF8
	}
	s = norm.NFC.String(s)
	s = strings.Map(func(r rune) rune {
		if isInvisibleControl(r) {
			return -1
		}
		return r
	}, s)
	s = norm.NFC.String(s)
	if s == "" {
		return "", RejectEmpty
	}
	if len(s) > MaxUsernameBytes {
		return "", RejectTooLong
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.Is(unicode.Z, r) || r == '@' || r == '/' || r == ':' || r == utf8.RuneError {
			return "", RejectBadCharacter
		}
	}
	return s, ""
}

// isInvisibleControl reports the characters stripped from user names:
// C0/C1 controls (Cc) and every format character (Cf), which covers bidi
// embeddings, overrides and isolates, LRM/RLM, zero-width space/joiners,
// word joiner and invisible operators, soft hyphen and BOM.
func isInvisibleControl(r rune) bool {
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r)
}

// checkOriginURL returns "" when raw is an acceptable originUrl for the
// (already normalised) origin.
func checkOriginURL(raw, origin string) RejectReason {
	if origin == "" {
		return RejectNoOrigin
	}
	if len(raw) > MaxURLBytes {
		return RejectTooLong
	}
	// atproto "uri" syntax: a lower-case scheme, ':', then printable
	// non-space ASCII only.
	for i := 0; i < len(raw); i++ {
		if raw[i] <= 0x20 || raw[i] >= 0x7f {
			return RejectInvalidURI
		}
	}
	if !strings.HasPrefix(raw, "https://") {
		if len(raw) >= 8 && strings.EqualFold(raw[:8], "https://") {
			return RejectInvalidURI // atproto URI schemes are lower-case
		}
		return RejectNotHTTPS
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return RejectInvalidURI
	}
	if u.User != nil {
		return RejectUserinfo
	}
	if u.Port() != "" || strings.HasSuffix(u.Host, ":") {
		return RejectHostMismatch
	}
	h, err := NormalizeDomain(u.Hostname())
	if err != nil || h != origin {
		return RejectHostMismatch
	}
	return ""
}

// SanitizeSoftware trims and lower-cases a software name and reports
// whether it is 1 to 64 bytes of [a-z0-9._-].
func SanitizeSoftware(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > MaxSoftwareBytes {
		return "", false
	}
	// Lower-case ASCII by hand: strings.ToLower would fold U+212A (Kelvin)
	// into 'k' and let a non-ASCII name through.
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
			b[i] = c
		}
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return "", false
		}
	}
	return string(b), true
}
