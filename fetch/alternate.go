package fetch

import (
	"bytes"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxLinkHeaderBytes bounds the Link header text parsed.
const maxLinkHeaderBytes = 64 << 10

// LinkHeaderAlternate returns the first URL a response's Link header
// values name with rel="alternate" and an ActivityPub type, resolved
// against base; "" when there is none. Only http(s) URLs are returned.
func LinkHeaderAlternate(values []string, base *url.URL) string {
	total := 0
	for _, v := range values {
		total += len(v)
		if total > maxLinkHeaderBytes {
			return ""
		}
		for _, l := range parseLinkHeader(v) {
			if hasToken(l.params["rel"], "alternate") && IsActivityPub(l.params["type"]) {
				if u := resolveHTTP(base, l.target); u != "" {
					return u
				}
			}
		}
	}
	return ""
}

type linkValue struct {
	target string
	params map[string]string
}

// parseLinkHeader parses RFC 8288 link values: <target>; k=v; k="v", ...
// It is forgiving: a malformed value is skipped, never an error.
func parseLinkHeader(s string) []linkValue {
	var out []linkValue
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == ',') {
			i++
		}
		if i >= len(s) {
			break
		}
		if s[i] != '<' {
			// Skip to the next value.
			j := strings.IndexByte(s[i:], ',')
			if j < 0 {
				break
			}
			i += j + 1
			continue
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			break
		}
		lv := linkValue{target: strings.TrimSpace(s[i+1 : i+j]), params: map[string]string{}}
		i += j + 1
		for {
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			if i >= len(s) || s[i] != ';' {
				break
			}
			i++
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			k := i
			for i < len(s) && s[i] != '=' && s[i] != ';' && s[i] != ',' {
				i++
			}
			name := strings.ToLower(strings.TrimSpace(s[k:i]))
			val := ""
			if i < len(s) && s[i] == '=' {
				i++
				for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
					i++
				}
				if i < len(s) && s[i] == '"' {
					i++
					var b strings.Builder
					for i < len(s) && s[i] != '"' {
						if s[i] == '\\' && i+1 < len(s) {
							i++
						}
						b.WriteByte(s[i])
						i++
					}
					i++ // closing quote
					val = b.String()
				} else {
					k := i
					for i < len(s) && s[i] != ';' && s[i] != ',' {
						i++
					}
					val = strings.TrimSpace(s[k:i])
				}
			}
			if _, dup := lv.params[name]; !dup && name != "" {
				lv.params[name] = val // RFC 8288: the first occurrence counts
			}
		}
		out = append(out, lv)
	}
	return out
}

// hasToken reports whether a space-separated list holds tok, case-insensitively.
func hasToken(list, tok string) bool {
	for t := range strings.FieldsSeq(list) {
		if strings.EqualFold(t, tok) {
			return true
		}
	}
	return false
}

func resolveHTTP(base *url.URL, ref string) string {
	u, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	return u.String()
}

// maxHTMLTokens bounds the tokens HTMLAlternate looks at; the input itself
// is bounded by Config.MaxHTMLBytes.
const maxHTMLTokens = 200_000

// HTMLAlternate returns the href of the first <link rel="alternate"> with
// an ActivityPub type in an HTML page, resolved against base (or the
// page's <base href>); "" when there is none. rel is matched
// case-insensitively as a token list. It reads page with x/net/html's
// tokenizer, which runs in linear time, and stops at the first match.
func HTMLAlternate(page []byte, base *url.URL) string {
	z := html.NewTokenizer(bytes.NewReader(page))
	for n := 0; n < maxHTMLTokens; n++ {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if !hasAttr {
				continue
			}
			switch atom.Lookup(name) {
			case atom.Base:
				if href := attr(z, "href"); href != "" {
					if b := resolveHTTP(base, href); b != "" {
						base, _ = url.Parse(b)
					}
				}
			case atom.Link:
				var rel, typ, href string
				for {
					k, v, more := z.TagAttr()
					switch string(k) {
					case "rel":
						rel = string(v)
					case "type":
						typ = string(v)
					case "href":
						href = string(v)
					}
					if !more {
						break
					}
				}
				if hasToken(rel, "alternate") && IsActivityPub(strings.TrimSpace(typ)) {
					if u := resolveHTTP(base, strings.TrimSpace(href)); u != "" {
						return u
					}
				}
			}
		}
	}
	return ""
}

func attr(z *html.Tokenizer, name string) string {
	for {
		k, v, more := z.TagAttr()
		if string(k) == name {
			return string(v)
		}
		if !more {
			return ""
		}
	}
}
