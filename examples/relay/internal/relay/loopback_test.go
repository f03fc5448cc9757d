package relay

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/examples/relay/internal/store"
	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/sig"
)

// loopCap bounds the deliveries a loopback network makes, so a loop ends
// the test as a failure rather than never.
const loopCap = 200

// loopNet is relays and servers on loopback HTTP servers that deliver to
// each other through one queue, drained by run in the test's goroutine.
// Deliveries to inboxes off loopback are recorded, never sent.
type loopNet struct {
	t       *testing.T
	peers   *fakeLookup // documents of the servers off loopback
	mu      sync.Mutex
	queue   []loopJob
	sentN   int                       // loopback deliveries made
	offLoop map[string][]loopDelivery // by inbox host, off loopback
	byInbox map[string][]loopDelivery // loopback deliveries by inbox
}

type loopJob struct {
	signer *sig.Signer
	inbox  string
	body   []byte
}

type loopDelivery struct {
	Type, Actor, Object string
}

func newLoopNet(t *testing.T) *loopNet {
	return &loopNet{t: t, peers: &fakeLookup{docs: map[string][]byte{}, calls: map[string]int{}},
		offLoop: map[string][]loopDelivery{}, byInbox: map[string][]loopDelivery{}}
}

func onLoopback(u string) bool {
	p, err := url.Parse(u)
	return err == nil && (p.Hostname() == "127.0.0.1" || p.Hostname() == "::1")
}

func deliveryOf(body []byte) loopDelivery {
	var a activity
	_ = json.Unmarshal(body, &a)
	return loopDelivery{Type: a.typ(), Actor: a.actorID(), Object: a.objectID()}
}

// enqueue queues body for inboxes, signed by signer.
func (n *loopNet) enqueue(signer *sig.Signer, body []byte, inboxes ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, in := range inboxes {
		if !onLoopback(in) {
			u, _ := url.Parse(in)
			n.offLoop[u.Host] = append(n.offLoop[u.Host], deliveryOf(body))
			continue
		}
		n.queue = append(n.queue, loopJob{signer: signer, inbox: in, body: append([]byte(nil), body...)})
	}
}

// run delivers until the queue is empty, or fails the test at loopCap.
func (n *loopNet) run() {
	n.t.Helper()
	for {
		n.mu.Lock()
		if len(n.queue) == 0 {
			n.mu.Unlock()
			return
		}
		if n.sentN >= loopCap {
			n.mu.Unlock()
			n.t.Fatalf("%d deliveries and still going: a loop", loopCap)
		}
		j := n.queue[0]
		n.queue = n.queue[1:]
		n.sentN++
		n.byInbox[j.inbox] = append(n.byInbox[j.inbox], deliveryOf(j.body))
		n.mu.Unlock()
		req, _ := http.NewRequest(http.MethodPost, j.inbox, bytes.NewReader(j.body))
		req.Header.Set("Content-Type", ctActivity)
		if err := j.signer.Sign(req, sig.SchemeCavage); err != nil {
			n.t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			n.t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// Lookup serves loopback documents by GET and the others from peers.
func (n *loopNet) Lookup(ctx context.Context, u string) (*fetch.Document, error) {
	if !onLoopback(u) {
		return n.peers.Lookup(ctx, u)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	req.Header.Set("Accept", ctActivity)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %d %v", u, resp.StatusCode, err)
	}
	var id struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(raw, &id)
	return &fetch.Document{ID: id.ID, Raw: raw}, nil
}

// loopSender is a relay's Sender on the network.
type loopSender struct {
	n      *loopNet
	signer *sig.Signer
}

func (s loopSender) SendBatch(_ context.Context, _ string, body []byte, inboxes []string, _ deliver.Batch) error {
	s.n.enqueue(s.signer, body, inboxes...)
	return nil
}

// server starts a loopback server whose handler is set once its URL is known.
func (n *loopNet) server(h func(url string) http.Handler) string {
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	n.t.Cleanup(srv.Close)
	handler = h(srv.URL)
	return srv.URL
}

// relay starts a Relay on the network with key.
func (n *loopNet) relay(key crypto.Signer) *Relay {
	var r *Relay
	n.server(func(u string) http.Handler {
		st, err := store.OpenFile(filepath.Join(n.t.TempDir(), "subs.json"))
		if err != nil {
			n.t.Fatal(err)
		}
		signer, _ := sig.NewSigner(key, u+"/actor#main-key", nil)
		r, err = New(&Config{PublicURL: u, Key: key, Store: st, Sender: loopSender{n, signer}, Lookup: n})
		if err != nil {
			n.t.Fatal(err)
		}
		return r.Handler()
	})
	return r
}

// peer publishes a server off loopback with key name's pair and returns
// its actor and signer.
func (n *loopNet) peer(host, name string) (string, *sig.Signer) {
	k := loadKey(n.t, name)
	actor := "https://" + host + "/actor"
	pem, _ := sig.MarshalPublicKeyPEM(k.Public())
	n.peers.set(actor, map[string]any{"id": actor, "type": "Application", "inbox": "https://" + host + "/inbox",
		"publicKey": map[string]any{"id": actor + "#main-key", "owner": actor, "publicKeyPem": string(pem)}})
	s, _ := sig.NewSigner(k, actor+"#main-key", nil)
	return actor, s
}

// reflector starts a LitePub-style relay actor that announces every object
// it is sent to all its followers, under a new id each time: the behaviour
// that turns two relays into a loop.
func (n *loopNet) reflector(key crypto.Signer) (actor string, signer *sig.Signer) {
	n.server(func(u string) http.Handler {
		actor = u + "/relay"
		signer, _ = sig.NewSigner(key, actor+"#main-key", nil)
		pem, _ := sig.MarshalPublicKeyPEM(key.Public())
		var (
			mu        sync.Mutex
			followers []string
			seq       int
		)
		mux := http.NewServeMux()
		mux.HandleFunc("GET /relay", func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, ctActivity, map[string]any{"id": actor, "type": "Application", "inbox": u + "/inbox",
				"publicKey": map[string]any{"id": actor + "#main-key", "owner": actor, "publicKeyPem": string(pem)}})
		})
		mux.HandleFunc("POST /inbox", func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			d := deliveryOf(body)
			mu.Lock()
			defer mu.Unlock()
			switch d.Type {
			case "Follow":
				if doc, err := n.Lookup(r.Context(), d.Actor); err == nil {
					var a struct{ Inbox string }
					_ = json.Unmarshal(doc.Raw, &a)
					followers = append(followers, a.Inbox)
				}
			case "Create", "Announce":
				seq++
				b, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("%s/activities/%d", u, seq), "type": "Announce", "actor": actor,
					"to": []string{actor + "/followers"}, "object": d.Object})
				n.enqueue(signer, b, followers...)
			}
			w.WriteHeader(http.StatusAccepted)
		})
		return mux
	})
	return actor, signer
}

func follow(actor, object string) []byte {
	b, _ := json.Marshal(map[string]any{"id": actor + "/follows/" + strings.TrimPrefix(object, "https://"), "type": "Follow", "actor": actor, "object": object})
	return b
}

func createNote(actor, note string) []byte {
	b, _ := json.Marshal(map[string]any{"id": note + "/activity", "type": "Create", "actor": actor, "to": []string{Public},
		"object": map[string]any{"id": note, "type": "Note", "attributedTo": actor}})
	return b
}

// count counts deliveries whose object is obj.
func count(ds []loopDelivery, obj string) int {
	n := 0
	for _, d := range ds {
		if d.Object == obj {
			n++
		}
	}
	return n
}

// TestTwoRelaysSubscribedToEachOther: two relays, each subscribed to the
// other (each relay actor followed the other's), relay one post a bounded
// number of times. Before the fix the follow-backs alone never ended: each
// relay answered the other's follow-back with a follow-back of its own.
func TestTwoRelaysSubscribedToEachOther(t *testing.T) {
	n := newLoopNet(t)
	ra, rb := n.relay(loadKey(t, "relay")), n.relay(loadKey(t, "forger"))
	sa, _ := sig.NewSigner(loadKey(t, "relay"), ra.KeyID(), nil)
	sb, _ := sig.NewSigner(loadKey(t, "forger"), rb.KeyID(), nil)
	origin, so := n.peer("a.example", "a")
	other, sother := n.peer("b.example", "b")

	n.enqueue(sb, follow(rb.Actor(), ra.Actor()), ra.cfg.PublicURL+"/inbox") // B subscribes to A
	n.enqueue(sa, follow(ra.Actor(), rb.Actor()), rb.cfg.PublicURL+"/inbox") // and A to B
	n.enqueue(so, follow(origin, Public), ra.cfg.PublicURL+"/inbox")
	n.enqueue(sother, follow(other, Public), rb.cfg.PublicURL+"/inbox")
	n.run()
	for _, r := range []*Relay{ra, rb} {
		if c, _ := r.ActiveSubscribers(context.Background()); c != 2 {
			t.Fatalf("%s: %d subscribed servers; want 2", r.cfg.PublicURL, c)
		}
	}

	note := "https://a.example/notes/1"
	n.enqueue(so, createNote(origin, note), ra.cfg.PublicURL+"/inbox")
	n.run()
	if got := count(n.offLoop["b.example"], note); got != 1 {
		t.Errorf("b.example got the post %d times; want once", got)
	}
	if got := count(n.offLoop["a.example"], note); got != 0 {
		t.Errorf("a.example got its own post back %d times", got)
	}
	if got := count(n.byInbox[ra.cfg.PublicURL+"/inbox"], note); got > 1 {
		t.Errorf("relay A was sent the post %d times; want at most once", got)
	}
	if got := count(n.byInbox[rb.cfg.PublicURL+"/inbox"], note); got != 1 {
		t.Errorf("relay B was sent the post %d times; want once", got)
	}
}

// TestLitePubAnnounceWrapLoop: two LitePub-style relays subscribed to one
// relay each announce, under new ids, what the relay sends them. Before the
// fix the relay relayed each such Announce to the other, forever; now it
// relays the post once.
func TestLitePubAnnounceWrapLoop(t *testing.T) {
	n := newLoopNet(t)
	r := n.relay(loadKey(t, "relay"))
	inbox := r.cfg.PublicURL + "/inbox"
	r1, s1 := n.reflector(loadKey(t, "b"))
	r2, s2 := n.reflector(loadKey(t, "c"))
	origin, so := n.peer("a.example", "a")
	reader, sr := n.peer("d.example", "forger")
	n.enqueue(s1, follow(r1, r.Actor()), inbox)
	n.enqueue(s2, follow(r2, r.Actor()), inbox)
	n.enqueue(so, follow(origin, Public), inbox)
	n.enqueue(sr, follow(reader, Public), inbox)
	n.run()

	note := "https://a.example/notes/1"
	n.enqueue(so, createNote(origin, note), inbox)
	n.run()
	if got := count(n.offLoop["d.example"], note); got != 1 {
		t.Errorf("d.example got the post %d times; want once", got)
	}
	for _, rf := range []string{r1, r2} {
		in := strings.TrimSuffix(rf, "/relay") + "/inbox"
		if got := count(n.byInbox[in], note); got != 1 {
			t.Errorf("reflector %s was sent the post %d times; want once", rf, got)
		}
	}
}
