package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/fedkit/fedkit/fetch"
)

// NodeInfo paths.
const (
	NodeInfoWellKnownPath = "/.well-known/nodeinfo"
	NodeInfo21Path        = "/nodeinfo/2.1"
	NodeInfo20Path        = "/nodeinfo/2.0"
)

const nodeinfoSchema = "http://nodeinfo.diaspora.software/ns/schema/"

// NodeInfoFunc returns what the server says it runs, asked per request;
// fetch.NodeInfo is the type fetch reads it into. Version is ignored.
type NodeInfoFunc func(ctx context.Context) (*fetch.NodeInfo, error)

// NodeInfo serves /.well-known/nodeinfo (linking the 2.1 and 2.0
// documents under publicURL) and the two documents from info: mount it on
// NodeInfoWellKnownPath, NodeInfo21Path and NodeInfo20Path. Missing
// protocols default to ["activitypub"]; the software name is lower-cased,
// as the schema requires; 2.0 leaves out what 2.1 added (repository,
// homepage).
func NodeInfo(publicURL string, info NodeInfoFunc) http.Handler {
	base := strings.TrimSuffix(publicURL, "/")
	links, _ := json.Marshal(map[string]any{"links": []map[string]string{
		{"rel": nodeinfoSchema + "2.1", "href": base + NodeInfo21Path},
		{"rel": nodeinfoSchema + "2.0", "href": base + NodeInfo20Path},
	}})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !cors(w, r) {
			return
		}
		var version string
		switch r.URL.Path {
		case NodeInfoWellKnownPath:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(links)
			return
		case NodeInfo21Path:
			version = "2.1"
		case NodeInfo20Path:
			version = "2.0"
		default:
			http.NotFound(w, r)
			return
		}
		ni, err := info(r.Context())
		if err != nil || ni == nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		b, err := json.Marshal(nodeInfoDoc(ni, version))
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", `application/json; profile="`+nodeinfoSchema+version+`#"`)
		_, _ = w.Write(b)
	})
}

// nodeInfoDoc lays ni out as the version's schema wants: every required
// member present, arrays never null.
func nodeInfoDoc(ni *fetch.NodeInfo, version string) map[string]any {
	sw := map[string]any{"name": strings.ToLower(ni.Software.Name), "version": ni.Software.Version}
	if version == "2.1" {
		if ni.Software.Repository != "" {
			sw["repository"] = ni.Software.Repository
		}
		if ni.Software.Homepage != "" {
			sw["homepage"] = ni.Software.Homepage
		}
	}
	users := map[string]any{}
	for k, v := range map[string]*int64{"total": ni.Usage.Users.Total, "activeMonth": ni.Usage.Users.ActiveMonth, "activeHalfyear": ni.Usage.Users.ActiveHalfyear} {
		if v != nil {
			users[k] = *v
		}
	}
	usage := map[string]any{"users": users}
	if ni.Usage.LocalPosts != nil {
		usage["localPosts"] = *ni.Usage.LocalPosts
	}
	if ni.Usage.LocalComments != nil {
		usage["localComments"] = *ni.Usage.LocalComments
	}
	protocols := ni.Protocols
	if len(protocols) == 0 {
		protocols = []string{"activitypub"}
	}
	metadata := ni.Metadata
	if metadata == nil {
		metadata = map[string]any{}
	}
	return map[string]any{
		"version":           version,
		"software":          sw,
		"protocols":         protocols,
		"services":          map[string]any{"inbound": nonNil(ni.Services.Inbound), "outbound": nonNil(ni.Services.Outbound)},
		"openRegistrations": ni.OpenRegistrations != nil && *ni.OpenRegistrations,
		"usage":             usage,
		"metadata":          metadata,
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
