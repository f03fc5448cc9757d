package fetch

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/fedkit/fedkit/origin"
)

// NodeInfo is what a server says it runs, read leniently: what is missing
// or malformed is left out (zero, nil), unknown fields are ignored.
type NodeInfo struct {
	// Version is the schema version of the document ("2.1").
	Version string
	// Software names what the server runs.
	Software Software
	// Protocols the server speaks ("activitypub").
	Protocols []string
	// Services lists third-party services.
	Services Services
	// OpenRegistrations is nil when not stated.
	OpenRegistrations *bool
	// Usage holds the usage statistics.
	Usage Usage
	// Metadata is the free-form metadata object, nil when absent.
	Metadata map[string]any
}

// Software names the server software; Name is lower-cased.
type Software struct {
	// Name are as the document states them; Name lower-cased.
	Name, Version, Repository, Homepage string
}

// Services lists third-party services the server talks to.
type Services struct {
	// Inbound are service names as stated.
	Inbound, Outbound []string
}

// Usage holds the statistics; nil means not stated.
type Usage struct {
	// Users counts users.
	Users UserCounts
	// LocalPosts counts local posts.
	LocalPosts *int64
	// LocalComments counts local comments.
	LocalComments *int64
}

// UserCounts are the user statistics; nil means not stated.
type UserCounts struct {
	// Total are the total, monthly and half-yearly active users.
	Total, ActiveMonth, ActiveHalfyear *int64
}

const nodeinfoSchemaPrefix = "nodeinfo.diaspora.software/ns/schema/"

// ParseNodeInfoLinks returns the href of the newest NodeInfo schema a
// /.well-known/nodeinfo document links, and its version.
func ParseNodeInfoLinks(b []byte) (href, version string, err error) {
	var doc struct {
		Links []struct {
			Rel  any `json:"rel"`
			Href any `json:"href"`
		} `json:"links"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return "", "", fmt.Errorf("%w: nodeinfo links: %v", ErrMalformed, err)
	}
	var best []int
	for _, l := range doc.Links {
		rel, _ := l.Rel.(string)
		h, _ := l.Href.(string)
		rel = strings.TrimSuffix(rel, "/")
		_, v, ok := strings.Cut(rel, nodeinfoSchemaPrefix)
		if !ok || h == "" || !(strings.HasPrefix(rel, "http://") || strings.HasPrefix(rel, "https://")) {
			continue
		}
		nums, ok := parseVersion(v)
		if !ok {
			continue
		}
		if best == nil || newer(nums, best) {
			best, href, version = nums, h, v
		}
	}
	if href == "" {
		return "", "", ErrNoNodeInfo
	}
	return href, version, nil
}

func parseVersion(v string) ([]int, bool) {
	parts := strings.Split(v, ".")
	if len(parts) > 4 {
		return nil, false
	}
	out := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 1000 {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

func newer(a, b []int) bool {
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return x > y
		}
	}
	return false
}

// ParseNodeInfo reads a NodeInfo document leniently. Only a body that is
// not a JSON object is an error.
func ParseNodeInfo(b []byte) (*NodeInfo, error) {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%w: nodeinfo: not a JSON object", ErrMalformed)
	}
	ni := &NodeInfo{Version: str(m["version"])}
	if sw, ok := m["software"].(map[string]any); ok {
		ni.Software = Software{
			Name:       strings.ToLower(strings.TrimSpace(str(sw["name"]))),
			Version:    str(sw["version"]),
			Repository: str(sw["repository"]),
			Homepage:   str(sw["homepage"]),
		}
	}
	ni.Protocols = strs(m["protocols"])
	if sv, ok := m["services"].(map[string]any); ok {
		ni.Services = Services{Inbound: strs(sv["inbound"]), Outbound: strs(sv["outbound"])}
	}
	if r, ok := m["openRegistrations"].(bool); ok {
		ni.OpenRegistrations = &r
	}
	if u, ok := m["usage"].(map[string]any); ok {
		if us, ok := u["users"].(map[string]any); ok {
			ni.Usage.Users = UserCounts{Total: count(us["total"]), ActiveMonth: count(us["activeMonth"]), ActiveHalfyear: count(us["activeHalfyear"])}
		}
		ni.Usage.LocalPosts = count(u["localPosts"])
		ni.Usage.LocalComments = count(u["localComments"])
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		ni.Metadata = md
	}
	return ni, nil
}

func str(v any) string { s, _ := v.(string); return s }

// strs reads a list of strings, keeping the strings of a mixed list; a
// lone string (as some servers write protocols) is a list of one.
func strs(v any) []string {
	switch t := v.(type) {
	case string:
		if t != "" {
			return []string{t}
		}
	case []any:
		var out []string
		for _, e := range t {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// count reads a non-negative whole number, or a numeric string.
func count(v any) *int64 {
	var f float64
	switch t := v.(type) {
	case float64:
		f = t
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
		if err != nil || n < 0 {
			return nil
		}
		return &n
	default:
		return nil
	}
	if f < 0 || f != math.Trunc(f) || f > 1<<53 {
		return nil
	}
	n := int64(f)
	return &n
}

// NodeInfo reads what the server at serverOrigin ("https://social.example"
// or "social.example") runs: the links at /.well-known/nodeinfo, then the
// document of the newest schema they link, which must be on the same host,
// since a server answers only for itself.
func (f *Fetcher) NodeInfo(ctx context.Context, serverOrigin string) (*NodeInfo, error) {
	base := serverOrigin
	if !strings.Contains(base, "://") {
		base = f.wellKnownScheme(base) + "://" + base
	}
	bu, err := url.Parse(base)
	if err != nil || bu.Host == "" {
		return nil, fmt.Errorf("%w: origin %s", ErrInvalidAddress, clip(serverOrigin))
	}
	wk := bu.Scheme + "://" + bu.Host + "/.well-known/nodeinfo"
	resp, err := f.get(ctx, wk, getOpts{accept: "application/json", max: f.cfg.MaxDocumentBytes})
	if err != nil {
		return nil, err
	}
	if resp.status != 200 {
		return nil, f.statusError(resp)
	}
	href, _, err := ParseNodeInfoLinks(resp.body)
	if err != nil {
		return nil, err
	}
	target := resolveHTTP(resp.url, href)
	if target == "" || !origin.SameHost(target, bu.String()) {
		return nil, fmt.Errorf("%w: link to another host", ErrNoNodeInfo)
	}
	resp, err = f.get(ctx, target, getOpts{accept: "application/json", max: f.cfg.MaxDocumentBytes})
	if err != nil {
		return nil, err
	}
	if resp.status != 200 {
		return nil, f.statusError(resp)
	}
	if !origin.SameHost(resp.url.String(), bu.String()) {
		return nil, fmt.Errorf("%w: redirected to another host", ErrNoNodeInfo)
	}
	return ParseNodeInfo(resp.body)
}
