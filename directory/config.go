package directory

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// MaxDirectories is the most Directory entries a configuration may list.
const MaxDirectories = 8

// Configuration keys, in the YAML file and in the environment.
const (
	KeyDirectories      = "DIRECTORIES"
	KeySchedulerEnabled = "DIRECTORY_SCHEDULER_ENABLED"
	KeyProfile          = "DIRECTORY_PROFILE"
)

// maxConfigBytes bounds the YAML this package parses (a relay config file
// or one environment value).
const maxConfigBytes = 1 << 20

// Entry is one configured Directory.
type Entry struct {
	// Origin is the canonical HTTPS origin.
	Origin string
	// Enabled opts the entry in to lifecycle traffic. Defaults to false.
	Enabled bool
	// Line is the entry's configuration line, or 0 when unknown.
	Line int
}

// Settings is the validated Directory configuration. The zero value is the
// default: no Directories, scheduler off, empty profile.
type Settings struct {
	// Directories lists at most MaxDirectories unique entries in
	// configuration order.
	Directories []Entry
	// SchedulerEnabled is the DIRECTORY_SCHEDULER_ENABLED gate. It can only
	// be set from a YAML file. Defaults to false.
	SchedulerEnabled bool
	// Profile is the sanitised, normalised DIRECTORY_PROFILE.
	Profile Profile
	// ProfileSet reports whether DIRECTORY_PROFILE was present.
	ProfileSet bool
}

// Lookup returns the entry for a canonical origin.
func (s *Settings) Lookup(origin string) (Entry, bool) {
	for _, e := range s.Directories {
		if e.Origin == origin {
			return e, true
		}
	}
	return Entry{}, false
}

// Warning is an operator warning about an optional configuration value
// that was treated as unset.
type Warning struct {
	// Source is "" for the YAML file, or the environment variable name.
	Source string
	// Line is the configuration line (1-based) when known, else 0.
	Line int
	// Field is the offending key, e.g. "DIRECTORY_PROFILE.contact_url".
	Field string
	// Message says what was wrong, without echoing the value.
	Message string
}

// String formats the warning as "SOURCE: line N: FIELD: MESSAGE (treated as
// unset)", leaving out an empty source and an unknown line.
func (w Warning) String() string {
	var b strings.Builder
	if w.Source != "" {
		b.WriteString(w.Source + ": ")
	}
	if w.Line > 0 {
		b.WriteString("line " + strconv.Itoa(w.Line) + ": ")
	}
	b.WriteString(w.Field + ": " + w.Message + " (treated as unset)")
	return b.String()
}

// ErrStrictWarnings is returned in strict mode when optional metadata
// produced warnings; the warnings are returned alongside.
var ErrStrictWarnings = errors.New("directory: configuration warnings in strict mode")

// LoadOpts are options for ParseConfig and LoadEnv.
type LoadOpts struct {
	// Strict turns warnings into an error wrapping ErrStrictWarnings (the
	// relay's --strict). Defaults to false.
	Strict bool
}

// ParseConfig reads the Directory keys from a relay YAML configuration
// file, ignoring every other top-level key. It touches no network and no
// state, so it backs `relay -t`. Invalid Directory entries, an invalid
// participation_mode and malformed structure are errors wrapping
// ErrConfig; other invalid optional profile values become warnings with
// their line and are left unset.
func ParseConfig(data []byte, opts *LoadOpts) (*Settings, []Warning, error) {
	top, err := parseYAML(data)
	if err != nil {
		return nil, nil, err
	}
	p := &loader{}
	s := &Settings{}
	if top != nil {
		m, ok := top.(*ast.MappingNode)
		if !ok {
			return nil, nil, fmt.Errorf("%w: top level is not a mapping", ErrConfig)
		}
		for _, mv := range m.Values {
			switch keyName(mv.Key) {
			case KeyDirectories:
				if s.Directories, err = p.directories(mv.Value); err != nil {
					return nil, nil, err
				}
			case KeySchedulerEnabled:
				if s.SchedulerEnabled, err = boolValue(mv.Value, KeySchedulerEnabled); err != nil {
					return nil, nil, err
				}
			case KeyProfile:
				s.ProfileSet = true
				if s.Profile, err = p.profile(mv.Value); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	return p.finish(s, opts)
}

// LoadEnv reads DIRECTORIES (a YAML sequence) and DIRECTORY_PROFILE (a
// YAML mapping) from the environment through lookup (os.LookupEnv).
// DIRECTORY_SCHEDULER_ENABLED=true in the environment is refused with a
// warning: the scheduler and unregister need a durable file to share.
func LoadEnv(lookup func(string) (string, bool), opts *LoadOpts) (*Settings, []Warning, error) {
	s := &Settings{}
	p := &loader{}
	if v, ok := lookup(KeyDirectories); ok && strings.TrimSpace(v) != "" {
		p.source = KeyDirectories
		n, err := parseYAML([]byte(v))
		if err != nil {
			return nil, nil, err
		}
		if s.Directories, err = p.directories(n); err != nil {
			return nil, nil, err
		}
	}
	if v, ok := lookup(KeyProfile); ok && strings.TrimSpace(v) != "" {
		p.source = KeyProfile
		n, err := parseYAML([]byte(v))
		if err != nil {
			return nil, nil, err
		}
		s.ProfileSet = true
		if s.Profile, err = p.profile(n); err != nil {
			return nil, nil, err
		}
	}
	if v, ok := lookup(KeySchedulerEnabled); ok && strings.TrimSpace(v) != "" && strings.TrimSpace(v) != "false" {
		p.warns = append(p.warns, Warning{Source: KeySchedulerEnabled, Field: KeySchedulerEnabled,
			Message: "environment-only scheduler activation is unsupported; set it in the YAML file"})
	}
	return p.finish(s, opts)
}

func parseYAML(data []byte) (ast.Node, error) {
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("%w: configuration larger than %d bytes", ErrConfig, maxConfigBytes)
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		// goccy's message quotes the offending source; keep only its position.
		return nil, fmt.Errorf("%w: YAML syntax error", ErrConfig)
	}
	switch len(f.Docs) {
	case 0:
		return nil, nil
	case 1:
		return f.Docs[0].Body, nil
	}
	return nil, fmt.Errorf("%w: more than one YAML document", ErrConfig)
}

type loader struct {
	source string
	warns  []Warning
}

func (p *loader) finish(s *Settings, opts *LoadOpts) (*Settings, []Warning, error) {
	if opts != nil && opts.Strict && len(p.warns) > 0 {
		return nil, p.warns, fmt.Errorf("%w: %s", ErrStrictWarnings, p.warns[0])
	}
	return s, p.warns, nil
}

func line(n ast.Node) int {
	if n == nil || n.GetToken() == nil || n.GetToken().Position == nil {
		return 0
	}
	return n.GetToken().Position.Line
}

func keyName(k ast.MapKeyNode) string {
	if s, ok := k.(*ast.StringNode); ok {
		return s.Value
	}
	return ""
}

func isNull(n ast.Node) bool {
	_, ok := n.(*ast.NullNode)
	return n == nil || ok
}

func (p *loader) errf(n ast.Node, format string, args ...any) error {
	var where string
	if p.source != "" {
		where = p.source + ": "
	}
	if l := line(n); l > 0 {
		where += "line " + strconv.Itoa(l) + ": "
	}
	return fmt.Errorf("%w: %s%s", ErrConfig, where, fmt.Sprintf(format, args...))
}

func boolValue(n ast.Node, key string) (bool, error) {
	if isNull(n) {
		return false, nil
	}
	b, ok := n.(*ast.BoolNode)
	if !ok {
		return false, fmt.Errorf("%w: line %d: %s must be true or false", ErrConfig, line(n), key)
	}
	return b.Value, nil
}

func (p *loader) directories(n ast.Node) ([]Entry, error) {
	if isNull(n) {
		return nil, nil
	}
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		return nil, p.errf(n, "%s must be a list", KeyDirectories)
	}
	if len(seq.Values) > MaxDirectories {
		return nil, p.errf(n, "%s lists more than %d entries", KeyDirectories, MaxDirectories)
	}
	out := make([]Entry, 0, len(seq.Values))
	seen := map[string]bool{}
	for _, item := range seq.Values {
		m, ok := item.(*ast.MappingNode)
		if !ok {
			return nil, p.errf(item, "each %s entry must be a mapping with origin and enabled", KeyDirectories)
		}
		e := Entry{Line: line(item)}
		var haveOrigin bool
		for _, mv := range m.Values {
			switch k := keyName(mv.Key); k {
			case "origin":
				s, ok := mv.Value.(*ast.StringNode)
				if !ok {
					return nil, p.errf(mv.Value, "origin must be a string")
				}
				if _, err := ParseOrigin(s.Value); err != nil {
					return nil, p.errf(mv.Value, "%v", err)
				}
				e.Origin, haveOrigin = s.Value, true
			case "enabled":
				b, err := boolValue(mv.Value, "enabled")
				if err != nil {
					return nil, p.errf(mv.Value, "enabled must be true or false")
				}
				e.Enabled = b
			default:
				return nil, p.errf(mv.Key, "unknown key in %s entry", KeyDirectories)
			}
		}
		if !haveOrigin {
			return nil, p.errf(item, "%s entry has no origin", KeyDirectories)
		}
		if seen[e.Origin] {
			return nil, p.errf(item, "duplicate %s origin", KeyDirectories)
		}
		seen[e.Origin] = true
		out = append(out, e)
	}
	return out, nil
}

func (p *loader) profile(n ast.Node) (Profile, error) {
	var raw Profile
	if isNull(n) {
		q, _ := raw.Sanitize()
		return q, nil
	}
	m, ok := n.(*ast.MappingNode)
	if !ok {
		return Profile{}, p.errf(n, "%s must be a mapping", KeyProfile)
	}
	lines := map[string]int{}
	warn := func(node ast.Node, field, msg string) {
		p.warns = append(p.warns, Warning{Source: p.source, Line: line(node), Field: KeyProfile + "." + field, Message: msg})
	}
	str := func(node ast.Node, field string, dst *string) {
		switch v := node.(type) {
		case *ast.NullNode:
		case *ast.StringNode:
			*dst = v.Value
		case *ast.LiteralNode:
			*dst = v.Value.Value
		default:
			warn(node, field, "must be a string")
		}
	}
	list := func(node ast.Node, field string, dst *[]string) {
		if isNull(node) {
			return
		}
		seq, ok := node.(*ast.SequenceNode)
		if !ok {
			warn(node, field, "must be a list of strings")
			return
		}
		out := make([]string, 0, len(seq.Values))
		for _, it := range seq.Values {
			s, ok := it.(*ast.StringNode)
			if !ok {
				warn(it, field, "must be a list of strings")
				return
			}
			out = append(out, s.Value)
		}
		*dst = out
	}
	for _, mv := range m.Values {
		k := keyName(mv.Key)
		if _, dup := lines[k]; dup {
			return Profile{}, p.errf(mv.Key, "duplicate key in %s", KeyProfile)
		}
		lines[k] = line(mv.Value)
		if lines[k] == 0 {
			lines[k] = line(mv.Key)
		}
		switch k {
		case "participation_mode":
			// The one profile value that is not merely optional metadata:
			// a non-string is an error, not a warning and unset.
			switch mv.Value.(type) {
			case *ast.NullNode, *ast.StringNode, *ast.LiteralNode:
			default:
				return Profile{}, p.errf(mv.Key, "%s.participation_mode must be open, restricted or closed (a string)", KeyProfile)
			}
			str(mv.Value, k, &raw.ParticipationMode)
			switch strings.TrimSpace(raw.ParticipationMode) {
			case "", ParticipationOpen, ParticipationRestricted, ParticipationClosed:
			default:
				// The one profile value that is not merely optional metadata.
				return Profile{}, p.errf(mv.Value, "%s.participation_mode must be open, restricted or closed", KeyProfile)
			}
		case "availability":
			str(mv.Value, k, &raw.Availability)
		case "relay_type":
			str(mv.Value, k, &raw.RelayType)
		case "languages":
			list(mv.Value, k, &raw.Languages)
		case "countries":
			list(mv.Value, k, &raw.Countries)
		case "regions":
			list(mv.Value, k, &raw.Regions)
		case "topics":
			list(mv.Value, k, &raw.Topics)
		case "contact_fediverse":
			str(mv.Value, k, &raw.ContactFediverse)
		case "contact_email":
			str(mv.Value, k, &raw.ContactEmail)
		case "contact_url":
			str(mv.Value, k, &raw.ContactURL)
		case "participation_url":
			str(mv.Value, k, &raw.ParticipationURL)
		case "notes":
			str(mv.Value, k, &raw.Notes)
		default:
			warn(mv.Key, "(unknown key)", "not a profile field; ignored")
		}
	}
	q, ws := raw.Sanitize()
	for _, w := range ws {
		warn(nil, w.Field, w.Message)
		p.warns[len(p.warns)-1].Line = lines[w.Field]
	}
	return q, nil
}
