package identitytest

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/identity"
)

// Network is an offline atproto network: one httptest listener serves the
// PLC directory (GET /{did}) and, dispatching on the Host header, every
// host's /.well-known/atproto-did and /.well-known/did.json; DNS is a stub.
// Hosts the test did not configure answer 404, and nothing leaves the
// process.
type Network struct {
	// Server is the loopback listener serving PLC and every host's paths.
	Server *httptest.Server
	// DNS answers the _atproto TXT lookups.
	DNS *DNS

	mu        sync.Mutex
	docs      map[string][]byte        // did -> document (PLC)
	plcStatus map[string]int           // did -> forced status
	webDocs   map[string][]byte        // host -> did.json
	wellKnown map[string]string        // host -> body
	wkStatus  map[string]int           // host -> forced status
	delay     map[string]time.Duration // did or host -> delay before answering
	trickle   map[string]time.Duration // did or host -> wait between body bytes
	hits      map[string]int           // "plc:<did>", "wk:<host>", "web:<host>"
}

// NewNetwork starts a Network, closed when the test ends.
func NewNetwork(t testing.TB) *Network {
	n := &Network{
		DNS:       NewDNS(),
		docs:      map[string][]byte{},
		plcStatus: map[string]int{},
		webDocs:   map[string][]byte{},
		wellKnown: map[string]string{},
		wkStatus:  map[string]int{},
		delay:     map[string]time.Duration{},
		trickle:   map[string]time.Duration{},
		hits:      map[string]int{},
	}
	n.Server = httptest.NewServer(http.HandlerFunc(n.serve))
	t.Cleanup(n.Server.Close)
	return n
}

func (n *Network) serve(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	var (
		key    string
		body   []byte
		status = http.StatusNotFound
		wait   time.Duration
		drip   time.Duration
	)
	n.mu.Lock()
	switch {
	case r.URL.Path == "/.well-known/atproto-did":
		key = "wk:" + host
		wait, drip = n.delay[host], n.trickle[host]
		if v, ok := n.wellKnown[host]; ok {
			body, status = []byte(v), http.StatusOK
		}
		if s, ok := n.wkStatus[host]; ok {
			status = s
		}
	case r.URL.Path == "/.well-known/did.json":
		key = "web:" + host
		wait, drip = n.delay["did:web:"+host], n.trickle["did:web:"+host]
		if v, ok := n.webDocs[host]; ok {
			body, status = v, http.StatusOK
		}
	default:
		did := strings.TrimPrefix(r.URL.Path, "/")
		key = "plc:" + did
		wait, drip = n.delay[did], n.trickle[did]
		if v, ok := n.docs[did]; ok {
			body, status = v, http.StatusOK
		}
		if s, ok := n.plcStatus[did]; ok {
			status = s
		}
	}
	n.hits[key]++
	n.mu.Unlock()
	if wait > 0 {
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			return
		}
	}
	if status != http.StatusOK {
		http.Error(w, http.StatusText(status), status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if drip > 0 {
		// Headers at once, then the body a byte at a time: the connection
		// never goes quiet long enough for a read timeout.
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		for i := range body {
			_, _ = w.Write(body[i : i+1])
			w.(http.Flusher).Flush()
			select {
			case <-time.After(drip):
			case <-r.Context().Done():
				return
			}
		}
		return
	}
	_, _ = w.Write(body)
}

// ClientConfig is a guarded-client config that admits the loopback listener
// and resolves no host name, so a path the harness does not reroute fails
// instead of reaching the real network.
func ClientConfig() *client.Config {
	return &client.Config{
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Resolver:     noDNS{},
	}
}

// noDNS answers every lookup with "no such host".
type noDNS struct{}

func (noDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "no such host (identitytest resolves no names)", Name: host, IsNotFound: true}
}

// ResolverConfig points an identity.HTTPResolver at this network: PLCURL is
// the listener and every host's https:// paths are rerouted to it.
func (n *Network) ResolverConfig() *identity.ResolverConfig {
	base := n.Server.URL
	return &identity.ResolverConfig{
		PLCURL:  base,
		HostURL: func(string) string { return base },
	}
}

// Resolver returns an uncached resolver on this network.
func (n *Network) Resolver(t testing.TB) *identity.HTTPResolver {
	t.Helper()
	c, err := client.New(ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	r, err := identity.NewResolver(c, n.DNS, n.ResolverConfig())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Doc builds a DID document declaring handle (none if empty) and pds (none
// if empty).
func Doc(did, handle, pds string) []byte {
	doc := map[string]any{
		"@context":    []string{"https://www.w3.org/ns/did/v1", "https://w3id.org/security/multikey/v1"},
		"id":          did,
		"alsoKnownAs": []string{},
		"verificationMethod": []map[string]string{{
			"id": did + "#atproto", "type": "Multikey", "controller": did,
			"publicKeyMultibase": "zQ3shXjHeiBuRCKmM36cuYnm7YEMzhGnCmCyW92sRJ9pribSF",
		}},
		"service": []map[string]string{},
	}
	if handle != "" {
		doc["alsoKnownAs"] = []string{"at://" + handle}
	}
	if pds != "" {
		doc["service"] = []map[string]string{{"id": "#atproto_pds", "type": "AtprotoPersonalDataServer", "serviceEndpoint": pds}}
	}
	b, _ := json.Marshal(doc)
	return b
}

// SetDocument serves body as did's document: from the PLC directory for
// did:plc, from the host's /.well-known/did.json for did:web.
func (n *Network) SetDocument(did string, body []byte) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if host, ok := strings.CutPrefix(did, "did:web:"); ok {
		n.webDocs[host] = body
		return
	}
	n.docs[did] = body
}

// Claim makes handle and did name each other both ways through well-known:
// the document declares handle (with pds) and handle's atproto-did says did.
func (n *Network) Claim(did, handle, pds string) {
	n.SetDocument(did, Doc(did, handle, pds))
	n.SetWellKnown(handle, did)
}

// ClaimOneWay makes the document declare handle while handle's well-known
// names nothing (404) and DNS has no record: verification fails.
func (n *Network) ClaimOneWay(did, handle, pds string) {
	n.SetDocument(did, Doc(did, handle, pds))
	n.mu.Lock()
	delete(n.wellKnown, handle)
	n.mu.Unlock()
}

// SetWellKnown serves body at https://<host>/.well-known/atproto-did
// (impersonation when body names another DID).
func (n *Network) SetWellKnown(host, body string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.wellKnown[host] = body
	delete(n.wkStatus, host)
}

// FailWellKnown makes host's atproto-did answer status.
func (n *Network) FailWellKnown(host string, status int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.wkStatus[host] = status
}

// FailPLC makes the PLC directory answer status for did (404, 500, ...);
// status 0 restores normal service.
func (n *Network) FailPLC(did string, status int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if status == 0 {
		delete(n.plcStatus, did)
		return
	}
	n.plcStatus[did] = status
}

// Delay holds answers for key (a DID, or a host for its well-known) for d.
func (n *Network) Delay(key string, d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.delay[key] = d
}

// Trickle sends answers for key (a DID, or a host for its well-known) one
// body byte every d, as a server that keeps the connection busy without
// ever finishing.
func (n *Network) Trickle(key string, d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.trickle[key] = d
}

// PLCHits counts directory requests for did (did:web: document requests).
func (n *Network) PLCHits(did string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if host, ok := strings.CutPrefix(did, "did:web:"); ok {
		return n.hits["web:"+host]
	}
	return n.hits["plc:"+did]
}

// WellKnownHits counts atproto-did requests to host.
func (n *Network) WellKnownHits(host string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.hits["wk:"+host]
}

// TotalHits counts every request the listener served.
func (n *Network) TotalHits() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	t := 0
	for _, v := range n.hits {
		t += v
	}
	return t
}

// DNS is a TXT stub: names without records are NXDOMAIN, failing names are
// SERVFAIL. It never touches the system resolver.
type DNS struct {
	mu    sync.Mutex
	txt   map[string][]string
	fail  map[string]bool
	hits  map[string]int
	delay time.Duration
}

var _ identity.TXTResolver = (*DNS)(nil)

// NewDNS returns an empty stub.
func NewDNS() *DNS {
	return &DNS{txt: map[string][]string{}, fail: map[string]bool{}, hits: map[string]int{}}
}

// LookupTXT implements identity.TXTResolver.
func (d *DNS) LookupTXT(ctx context.Context, name string) ([]string, error) {
	d.mu.Lock()
	d.hits[name]++
	recs, ok := d.txt[name]
	fail := d.fail[name]
	wait := d.delay
	d.mu.Unlock()
	if wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, &net.DNSError{Err: ctx.Err().Error(), Name: name, IsTimeout: true}
		}
	}
	switch {
	case fail:
		return nil, &net.DNSError{Err: "server misbehaving", Name: name, IsTemporary: true}
	case !ok:
		return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
	}
	return append([]string(nil), recs...), nil
}

// SetTXT answers _atproto.<handle> with records.
func (d *DNS) SetTXT(handle string, records ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.txt["_atproto."+handle] = records
}

// Claim answers _atproto.<handle> with did=<did>.
func (d *DNS) Claim(handle, did string) { d.SetTXT(handle, "did="+did) }

// Fail makes _atproto.<handle> SERVFAIL (not authoritative).
func (d *DNS) Fail(handle string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fail["_atproto."+handle] = true
}

// SetDelay delays every answer by w.
func (d *DNS) SetDelay(w time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.delay = w
}

// Hits counts lookups of _atproto.<handle>.
func (d *DNS) Hits(handle string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.hits["_atproto."+handle]
}
