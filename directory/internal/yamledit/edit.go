package yamledit

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml"
)

// Key is the top-level key holding the Directory entries.
const Key = "DIRECTORIES"

var (
	// ErrEntryNotFound: no DIRECTORIES entry has that origin.
	ErrEntryNotFound = errors.New("yamledit: no DIRECTORIES entry for that origin")
	// ErrUnsupported: the entry is written in a form (flow style, block
	// scalars, anchors, duplicate origins) this editor does not rewrite, or
	// the re-parsed result differs from the intended change. Nothing is
	// written; the operator edits the file by hand.
	ErrUnsupported = errors.New("yamledit: layout not supported for a structural edit")
	// ErrInvalidYAML: the file does not parse as YAML.
	ErrInvalidYAML = errors.New("yamledit: config is not valid YAML")
)

// DisableBytes returns src with `enabled: false` for the entry whose origin
// is origin, every other byte unchanged. An entry that is already disabled
// (`enabled: false`, or `enabled:` with no value, which is null and read as
// false) returns src itself.
func DisableBytes(src []byte, origin string) ([]byte, error) {
	return editBytes(src, origin, false)
}

// RemoveBytes returns src without the entry whose origin is origin. The
// list becomes `DIRECTORIES: []` when it was the last entry.
func RemoveBytes(src []byte, origin string) ([]byte, error) {
	return editBytes(src, origin, true)
}

func editBytes(src []byte, origin string, remove bool) ([]byte, error) {
	model, err := parse(src)
	if err != nil {
		return nil, err
	}
	want, changed, err := expect(model, origin, remove)
	if err != nil || !changed {
		if err == nil {
			return src, nil
		}
		return nil, err
	}
	out, err := lineEdit(src, origin, remove)
	if err != nil {
		return nil, err
	}
	// The textual edit is trusted only when the whole document re-parses to
	// exactly the intended model: every other key, value and order intact.
	got, err := parse(out)
	if err != nil || !reflect.DeepEqual(got, want) {
		return nil, fmt.Errorf("%w: re-parsed result differs from the intended edit", ErrUnsupported)
	}
	return out, nil
}

func parse(src []byte) (any, error) {
	var v any
	if err := yaml.UnmarshalWithOptions(src, &v, yaml.UseOrderedMap()); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidYAML, firstLine(err.Error()))
	}
	return v, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// expect computes the intended model from the parsed one.
func expect(model any, origin string, remove bool) (want any, changed bool, err error) {
	top, ok := model.(yaml.MapSlice)
	if !ok {
		return nil, false, ErrEntryNotFound
	}
	ki := -1
	for i, it := range top {
		if it.Key == Key {
			ki = i
		}
	}
	if ki < 0 {
		return nil, false, ErrEntryNotFound
	}
	list, ok := top[ki].Value.([]any)
	if !ok {
		return nil, false, ErrEntryNotFound
	}
	idx := -1
	for i, e := range list {
		m, ok := e.(yaml.MapSlice)
		if !ok {
			continue
		}
		for _, kv := range m {
			if kv.Key == "origin" && kv.Value == origin {
				if idx >= 0 {
					return nil, false, fmt.Errorf("%w: duplicate origin", ErrUnsupported)
				}
				idx = i
			}
		}
	}
	if idx < 0 {
		return nil, false, ErrEntryNotFound
	}
	newList := make([]any, 0, len(list))
	newList = append(newList, list[:idx]...)
	if !remove {
		entry := list[idx].(yaml.MapSlice)
		ne := make(yaml.MapSlice, 0, len(entry)+1)
		found := false
		for _, kv := range entry {
			if kv.Key == "enabled" {
				found = true
				// `enabled:` with no value is null, which the configuration
				// reads as false: already disabled.
				if kv.Value == false || kv.Value == nil {
					return model, false, nil
				}
				kv.Value = false
			}
			ne = append(ne, kv)
			if kv.Key == "origin" && !hasKey(entry, "enabled") {
				ne = append(ne, yaml.MapItem{Key: "enabled", Value: false})
				found = true
			}
		}
		if !found {
			return nil, false, ErrUnsupported
		}
		newList = append(newList, ne)
	}
	newList = append(newList, list[idx+1:]...)
	nt := append(yaml.MapSlice(nil), top...)
	nt[ki].Value = newList
	return nt, true, nil
}

func hasKey(m yaml.MapSlice, k string) bool {
	for _, kv := range m {
		if kv.Key == k {
			return true
		}
	}
	return false
}

// line is one source line split into its text and its ending.
type line struct{ text, eol string }

func splitLines(src []byte) []line {
	var ls []line
	for len(src) > 0 {
		i := bytes.IndexByte(src, '\n')
		var raw string
		if i < 0 {
			raw, src = string(src), nil
		} else {
			raw, src = string(src[:i+1]), src[i+1:]
		}
		text := strings.TrimSuffix(raw, "\n")
		eol := raw[len(text):]
		if strings.HasSuffix(text, "\r") {
			text, eol = text[:len(text)-1], "\r"+eol
		}
		ls = append(ls, line{text, eol})
	}
	return ls
}

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

// blankOrComment reports lines that carry no YAML content.
func blankOrComment(s string) bool {
	t := strings.TrimLeft(s, " \t")
	return t == "" || t[0] == '#'
}

// splitValue splits the text after `key:` into leading space, the scalar
// and the rest (spacing and comment). It refuses values that are not one
// plain or quoted scalar on this line.
func splitValue(s string) (lead, val, rest string, ok bool) {
	v := strings.TrimLeft(s, " ")
	lead = s[:len(s)-len(v)]
	if v == "" || v[0] == '#' {
		return "", "", "", false
	}
	end := 0
	switch v[0] {
	case '"':
		end = 1
		for end < len(v) && v[end] != '"' {
			if v[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(v) {
			return "", "", "", false
		}
		end++
	case '\'':
		end = 1
		for {
			j := strings.IndexByte(v[end:], '\'')
			if j < 0 {
				return "", "", "", false
			}
			end += j + 1
			if end < len(v) && v[end] == '\'' {
				end++
				continue
			}
			break
		}
	case '|', '>', '&', '*', '!', '[', '{':
		return "", "", "", false
	default:
		end = len(v)
		if j := strings.Index(v, " #"); j >= 0 {
			end = j
		}
		end = len(strings.TrimRight(v[:end], " \t"))
	}
	rest = v[end:]
	if t := strings.TrimLeft(rest, " \t"); t != "" && t[0] != '#' {
		return "", "", "", false
	}
	return lead, v[:end], rest, true
}

// keyLine matches `name:` followed by a value, at the start of s.
func keyLine(s, name string) (after string, ok bool) {
	for _, k := range []string{name, `"` + name + `"`, "'" + name + "'"} {
		if strings.HasPrefix(s, k) {
			r := strings.TrimLeft(s[len(k):], " ")
			if strings.HasPrefix(r, ":") && (len(r) == 1 || r[1] == ' ' || r[1] == '\t') {
				return r[1:], true
			}
		}
	}
	return "", false
}

type item struct {
	start, end int // line range; end is one past the last content line
	keyIndent  int
	originLine int
	originVal  int // offset of the text after "origin:" in its line
	enabled    int // -1 when absent
	enabledVal int // offset of the text after "enabled:" in its line
}

// lineEdit finds the entry by its lines and rewrites only what it must.
// Anything unusual is refused; the caller re-parses the result anyway.
func lineEdit(src []byte, origin string, remove bool) ([]byte, error) {
	unsup := func(why string) error { return fmt.Errorf("%w: %s", ErrUnsupported, why) }
	ls := splitLines(src)
	// Only the first document is parsed for validation, so a stream of
	// several documents is left to the operator.
	content := false
	for _, l := range ls {
		if strings.HasPrefix(l.text, "---") || strings.HasPrefix(l.text, "...") {
			if content {
				return nil, unsup("multi-document stream")
			}
			continue
		}
		content = content || !blankOrComment(l.text)
	}
	hdr := -1
	for i, l := range ls {
		if after, ok := keyLine(l.text, Key); ok && indentOf(l.text) == 0 {
			if hdr >= 0 {
				return nil, unsup("duplicate key")
			}
			if t := strings.TrimLeft(after, " \t"); t != "" && t[0] != '#' {
				return nil, unsup("flow-style list")
			}
			hdr = i
		}
	}
	if hdr < 0 {
		return nil, unsup("key not found in block form")
	}
	// The block runs until content at column 0 that is not a column-0 item.
	seqIndent := -1
	blockEnd := len(ls)
	for i := hdr + 1; i < len(ls); i++ {
		t := ls[i].text
		if blankOrComment(t) {
			continue
		}
		ind := indentOf(t)
		isItem := strings.HasPrefix(t[ind:], "-") && (len(t) == ind+1 || t[ind+1] == ' ')
		if seqIndent < 0 {
			if !isItem {
				return nil, unsup("list items not found")
			}
			seqIndent = ind
		}
		if ind < seqIndent || (ind == seqIndent && !isItem) || strings.HasPrefix(t, "---") || strings.HasPrefix(t, "...") {
			blockEnd = i
			break
		}
	}
	var items []item
	var cur *item
	for i := hdr + 1; i < blockEnd; i++ {
		t := ls[i].text
		if blankOrComment(t) {
			continue
		}
		ind := indentOf(t)
		if ind == seqIndent {
			items = append(items, item{start: i, end: i + 1, keyIndent: -1, originLine: -1, enabled: -1})
			cur = &items[len(items)-1]
			rest := t[ind+1:]
			body := strings.TrimLeft(rest, " ")
			if body == "" || body[0] == '#' {
				continue
			}
			cur.keyIndent = ind + 1 + len(rest) - len(body)
			if err := cur.key(i, t, cur.keyIndent); err != nil {
				return nil, err
			}
			continue
		}
		cur.end = i + 1
		if cur.keyIndent < 0 {
			cur.keyIndent = ind
		}
		switch {
		case ind == cur.keyIndent:
			if err := cur.key(i, t, ind); err != nil {
				return nil, err
			}
		case ind < cur.keyIndent:
			return nil, unsup("irregular indentation")
		}
	}
	var hit *item
	for k := range items {
		it := &items[k]
		if it.originLine < 0 {
			continue
		}
		_, val, _, ok := splitValue(ls[it.originLine].text[it.originVal:])
		if ok && unquote(val) == origin {
			if hit != nil {
				return nil, unsup("duplicate origin")
			}
			hit = it
		}
	}
	if hit == nil {
		return nil, unsup("entry not found in block form")
	}
	out := make([]line, 0, len(ls)+1)
	switch {
	case remove:
		out = append(out, ls[:hit.start]...)
		out = append(out, ls[hit.end:]...)
		if len(items) == 1 {
			h := ls[hdr]
			after, _ := keyLine(h.text, Key)
			out[hdr].text = h.text[:len(h.text)-len(after)] + " []" + commentSuffix(after)
		}
	case hit.enabled >= 0:
		l := ls[hit.enabled]
		lead, _, rest, ok := splitValue(l.text[hit.enabledVal:])
		if !ok {
			return nil, unsup("enabled value")
		}
		pre := l.text[:hit.enabledVal]
		out = append(out, ls...)
		out[hit.enabled].text = pre + lead + "false" + rest
	default:
		out = append(out, ls[:hit.originLine+1]...)
		eol := ls[hit.originLine].eol
		if eol == "" {
			eol = "\n"
			out[len(out)-1].eol = eol
			eol = ""
		}
		out = append(out, line{strings.Repeat(" ", hit.keyIndent) + "enabled: false", eol})
		out = append(out, ls[hit.originLine+1:]...)
	}
	var b bytes.Buffer
	for _, l := range out {
		b.WriteString(l.text)
		b.WriteString(l.eol)
	}
	return b.Bytes(), nil
}

func commentSuffix(after string) string {
	t := strings.TrimLeft(after, " \t")
	if t == "" {
		return ""
	}
	return after[len(after)-len(t)-1:]
}

// key records origin/enabled keys of the current item; the key starts at
// offset at of line t.
func (it *item) key(i int, t string, at int) error {
	s := t[at:]
	if after, ok := keyLine(s, "origin"); ok {
		if it.originLine >= 0 {
			return fmt.Errorf("%w: duplicate origin key", ErrUnsupported)
		}
		it.originLine, it.originVal = i, len(t)-len(after)
	}
	if after, ok := keyLine(s, "enabled"); ok {
		if it.enabled >= 0 {
			return fmt.Errorf("%w: duplicate enabled key", ErrUnsupported)
		}
		it.enabled, it.enabledVal = i, len(t)-len(after)
	}
	return nil
}

func unquote(v string) string {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		var s string
		if err := yaml.Unmarshal([]byte(v), &s); err == nil {
			return s
		}
	}
	return v
}
