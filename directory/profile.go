package directory

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"unicode"
)

// Profile bounds, in bytes after trimming (spec section 2.3).
const (
	MaxProfileStringBytes = 256
	MaxProfileEmailBytes  = 320
	MaxProfileNotesBytes  = 1024
	MaxProfileListItems   = 16
	MaxProfileItemBytes   = 128
	MaxProfileJSONBytes   = 4096
)

// Participation modes; the empty string clears the relay-owned value.
const (
	ParticipationOpen       = "open"
	ParticipationRestricted = "restricted"
	ParticipationClosed     = "closed"
)

// Profile is the 12-field descriptive Directory profile sent on v2 and v3
// register. It is public metadata and never changes relay behaviour. Field
// order is the wire order.
type Profile struct {
	// ParticipationMode is "", ParticipationOpen, ParticipationRestricted
	// or ParticipationClosed. It is never derived from fan-out settings.
	ParticipationMode string `json:"participation_mode" yaml:"participation_mode"`
	// Availability is free text of at most MaxProfileStringBytes.
	Availability string `json:"availability" yaml:"availability"`
	// RelayType is free text of at most MaxProfileStringBytes.
	RelayType string `json:"relay_type" yaml:"relay_type"`
	// Languages, Countries, Regions and Topics hold at most
	// MaxProfileListItems non-empty items of at most MaxProfileItemBytes;
	// normalising trims, deduplicates and sorts them.
	Languages []string `json:"languages" yaml:"languages"`
	Countries []string `json:"countries" yaml:"countries"`
	Regions   []string `json:"regions" yaml:"regions"`
	Topics    []string `json:"topics" yaml:"topics"`
	// ContactFediverse is a Fediverse handle such as "@relay@example.social".
	ContactFediverse string `json:"contact_fediverse" yaml:"contact_fediverse"`
	// ContactEmail is a bare address ("Name <addr>" is refused), at most
	// MaxProfileEmailBytes.
	ContactEmail string `json:"contact_email" yaml:"contact_email"`
	// ContactURL and ParticipationURL are canonical HTTPS URLs or "".
	ContactURL       string `json:"contact_url" yaml:"contact_url"`
	ParticipationURL string `json:"participation_url" yaml:"participation_url"`
	// Notes is free text of at most MaxProfileNotesBytes.
	Notes string `json:"notes" yaml:"notes"`
}

// ProfileFields lists the 12 wire names in order.
var profileFields = [12]string{
	"participation_mode", "availability", "relay_type", "languages", "countries", "regions",
	"topics", "contact_fediverse", "contact_email", "contact_url", "participation_url", "notes",
}

// ProfileFields returns the 12 profile member names in wire order.
func ProfileFields() []string { return profileFields[:] }

type profileJSON Profile

// MarshalJSON emits compact JSON with the 12 keys in wire order and []
// (never null) for empty lists.
func (p Profile) MarshalJSON() ([]byte, error) {
	q := profileJSON(p)
	for _, l := range []*[]string{&q.Languages, &q.Countries, &q.Regions, &q.Topics} {
		if *l == nil {
			*l = []string{}
		}
	}
	return json.Marshal(q)
}

// Normalize returns the normalised profile: strings trimmed, lists
// trimmed, deduplicated and sorted in byte order, and every bound checked.
// Any invalid value is an error wrapping ErrInvalidProfile; use Sanitize to
// drop invalid values instead. Normalising twice gives identical bytes.
func (p Profile) Normalize() (Profile, error) {
	q, warns := p.sanitize()
	if len(warns) > 0 {
		return Profile{}, fmt.Errorf("%w: %s: %s", ErrInvalidProfile, warns[0].Field, warns[0].Message)
	}
	return q, nil
}

// Sanitize normalises p like Normalize but treats each invalid value as
// unset, returning one warning per dropped field (Field is the wire name,
// Line is 0).
func (p Profile) Sanitize() (Profile, []Warning) { return p.sanitize() }

func (p Profile) sanitize() (Profile, []Warning) {
	var warns []Warning
	warn := func(field, msg string) { warns = append(warns, Warning{Field: field, Message: msg}) }
	str := func(field, v string, max int) string {
		v = strings.TrimSpace(v)
		if msg := checkText(v, max); msg != "" {
			warn(field, msg)
			return ""
		}
		return v
	}
	list := func(field string, v []string) []string {
		out := make([]string, 0, len(v))
		for _, it := range v {
			it = strings.TrimSpace(it)
			if it == "" {
				warn(field, "empty list item")
				return []string{}
			}
			if msg := checkText(it, MaxProfileItemBytes); msg != "" {
				warn(field, "list item: "+msg)
				return []string{}
			}
			out = append(out, it)
		}
		slices.Sort(out)
		out = slices.Compact(out)
		if len(out) > MaxProfileListItems {
			warn(field, fmt.Sprintf("more than %d distinct items", MaxProfileListItems))
			return []string{}
		}
		return out
	}
	url := func(field, v string) string {
		v = str(field, v, MaxURLBytes)
		if v != "" && checkProfileURL(v) != nil {
			warn(field, "not a canonical HTTPS URL")
			return ""
		}
		return v
	}
	var q Profile
	q.ParticipationMode = str("participation_mode", p.ParticipationMode, MaxProfileStringBytes)
	switch q.ParticipationMode {
	case "", ParticipationOpen, ParticipationRestricted, ParticipationClosed:
	default:
		warn("participation_mode", "must be open, restricted or closed")
		q.ParticipationMode = ""
	}
	q.Availability = str("availability", p.Availability, MaxProfileStringBytes)
	q.RelayType = str("relay_type", p.RelayType, MaxProfileStringBytes)
	q.Languages = list("languages", p.Languages)
	q.Countries = list("countries", p.Countries)
	q.Regions = list("regions", p.Regions)
	q.Topics = list("topics", p.Topics)
	q.ContactFediverse = str("contact_fediverse", p.ContactFediverse, MaxProfileStringBytes)
	q.ContactEmail = str("contact_email", p.ContactEmail, MaxProfileEmailBytes)
	if q.ContactEmail != "" {
		if a, err := mail.ParseAddress(q.ContactEmail); err != nil || a.Name != "" || a.Address != q.ContactEmail {
			warn("contact_email", "must be a bare e-mail address")
			q.ContactEmail = ""
		}
	}
	q.ContactURL = url("contact_url", p.ContactURL)
	q.ParticipationURL = url("participation_url", p.ParticipationURL)
	q.Notes = str("notes", p.Notes, MaxProfileNotesBytes)
	// The Directory stores at most 4 KiB of canonical JSON; shed the
	// free-form fields from the end of the table until it fits.
	for _, f := range []string{"notes", "topics", "regions", "countries", "languages"} {
		if b, _ := q.MarshalJSON(); len(b) <= MaxProfileJSONBytes {
			break
		}
		warn(f, "profile exceeds 4096 bytes of JSON; field dropped")
		switch f {
		case "notes":
			q.Notes = ""
		case "topics":
			q.Topics = []string{}
		case "regions":
			q.Regions = []string{}
		case "countries":
			q.Countries = []string{}
		case "languages":
			q.Languages = []string{}
		}
	}
	return q, warns
}

// checkText returns why v is unacceptable, or "".
func checkText(v string, max int) string {
	if len(v) > max {
		return fmt.Sprintf("longer than %d bytes", max)
	}
	for _, r := range v {
		if r == unicode.ReplacementChar || unicode.IsControl(r) {
			return "control character or invalid UTF-8"
		}
	}
	return ""
}

// Digest returns the hex SHA-256 of the normalised profile's JSON, used
// only as local change-detection state; it is never sent. An invalid
// profile is digested after Sanitize.
func (p Profile) Digest() string {
	q, _ := p.Sanitize()
	b, _ := q.MarshalJSON()
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// IsZero reports whether every field is empty.
func (p Profile) IsZero() bool {
	return p.ParticipationMode == "" && p.Availability == "" && p.RelayType == "" &&
		len(p.Languages) == 0 && len(p.Countries) == 0 && len(p.Regions) == 0 && len(p.Topics) == 0 &&
		p.ContactFediverse == "" && p.ContactEmail == "" && p.ContactURL == "" &&
		p.ParticipationURL == "" && p.Notes == ""
}
