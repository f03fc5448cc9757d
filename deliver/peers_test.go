package deliver_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/sig"
)

// The double knock as real servers answer it (spec section 11): each test
// plays one peer's verifier and names the behaviour it depends on.

// goToSocial verifies draft-cavage only: any RFC 9421 signature gets 401,
// and a correctly signed Like of a status it does not have gets 400.
func goToSocial(r *http.Request, rec received) int {
	switch {
	case r.Header.Get("Signature-Input") != "":
		return http.StatusUnauthorized
	case rec.VerifyErr != nil:
		return http.StatusUnauthorized
	case strings.Contains(rec.Body, `"Like"`):
		return http.StatusBadRequest
	}
	return http.StatusAccepted
}

// peerTube verifies draft-cavage only and answers 403 to any RFC 9421
// signature.
func peerTube(r *http.Request, rec received) int {
	switch {
	case r.Header.Get("Signature-Input") != "":
		return http.StatusForbidden
	case rec.VerifyErr != nil:
		return http.StatusUnauthorized
	}
	return http.StatusAccepted
}

// fedify verifies both schemes, but its draft-cavage verifier is RSA-only:
// an Ed25519 cavage signature throws, and the server answers 500.
func fedify(r *http.Request, rec received) int {
	switch {
	case r.Header.Get("Signature-Input") == "" && strings.Contains(rec.Signature, `algorithm="ed25519"`):
		return http.StatusInternalServerError
	case rec.VerifyErr != nil:
		return http.StatusUnauthorized
	}
	return http.StatusAccepted
}

// peerInbox is an inbox answering as peer does.
func peerInbox(t *testing.T, b *bundle, peer func(*http.Request, received) int) *inbox {
	var ib *inbox
	ib = newInbox(t, b.clock, func(r *http.Request, n int) (int, http.Header) {
		return peer(r, ib.requests()[n-1]), nil
	})
	return ib
}

func like(id string) []byte {
	return []byte(strings.Replace(string(activity(id)), `"Create"`, `"Like"`, 1))
}

func schemesSeen(ib *inbox) []sig.Scheme {
	var out []sig.Scheme
	for _, r := range ib.requests() {
		s := r.Scheme
		if s == 0 && strings.Contains(r.Signature, "keyId=") {
			s = sig.SchemeCavage // signed, but not verifiable by the test's verifier
		}
		out = append(out, s)
	}
	return out
}

func (b *bundle) sendLike(t *testing.T, id string, inboxes ...string) {
	t.Helper()
	if err := b.d.Send(context.Background(), testKeyID, like(id), inboxes); err != nil {
		t.Fatal(err)
	}
}

// A host whose cavage is remembered gets no second knock when it refuses
// an activity for its content: GoToSocial's 400 is not a signature refusal.
func TestGoToSocialContentRefusalOneKnockWhenCavageRemembered(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ib := peerInbox(t, b, goToSocial)
	b.send(t, "create", ib.URL("/inbox"))
	b.runDue(t)
	before := len(ib.requests())
	b.sendLike(t, "like", ib.URL("/inbox"))
	b.runDue(t)
	if got := schemesSeen(ib)[before:]; !slices.Equal(got, []sig.Scheme{sig.SchemeCavage}) {
		t.Fatalf("the Like went as %v, want one cavage request", got)
	}
	f := b.rec.Failures()
	if len(f) != 1 || f[0].StatusCode != 400 {
		t.Fatalf("failures %+v, want the 400", f)
	}
	atts := b.rec.Attempts()
	if last := atts[len(atts)-1]; last.StatusCode != 400 || last.Scheme != sig.SchemeCavage {
		t.Fatalf("attempt reported %d under %v, want 400 under cavage", last.StatusCode, last.Scheme)
	}
}

// With no scheme remembered, a 400 gets one knock with RFC 9421; GoToSocial
// answers that 401, and the first answer stands: 400 under cavage, refused
// for good.
func TestGoToSocialContentRefusalFirstAnswerStands(t *testing.T) {
	t.Parallel()
	schemes := sig.NewHostSchemes(0)
	b := setup(t, func(c *deliver.Config) { c.FirstScheme, c.Schemes = sig.SchemeCavage, schemes })
	ib := peerInbox(t, b, goToSocial)
	b.sendLike(t, "like", ib.URL("/inbox"))
	b.runDue(t)
	if got := schemesSeen(ib); len(got) != 2 {
		t.Fatalf("requests %v, want cavage then one RFC 9421 knock", got)
	}
	atts := b.rec.Attempts()
	if len(atts) != 1 || atts[0].StatusCode != 400 || atts[0].Scheme != sig.SchemeCavage {
		t.Fatalf("attempts %+v, want one reporting 400 under cavage", atts)
	}
	if f := b.rec.Failures(); len(f) != 1 || f[0].StatusCode != 400 {
		t.Fatalf("failures %+v, want the 400", f)
	}
	if _, known, _ := schemes.Scheme(context.Background(), hostOf(ib)); known {
		t.Fatal("a refused scheme was remembered")
	}
}

// With Mastodon's rule a 401 is retryable and counts against the breaker;
// ten content refusals by GoToSocial must not turn into ten 401s that open
// the host's breaker and hold its good deliveries.
func TestGoToSocialContentRefusalsDoNotOpenBreaker(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *deliver.Config) {
		c.FirstScheme = sig.SchemeCavage
		c.Permanent = deliver.MastodonPermanent
		c.PermanentIfSenderGone = []int{401}
	})
	ib := peerInbox(t, b, goToSocial)
	for i := range deliver.BreakerThresholdDefault + 2 {
		b.sendLike(t, "like-"+string(rune('a'+i)), ib.URL("/inbox"))
	}
	b.runDue(t)
	b.send(t, "create", ib.URL("/inbox"))
	b.runDue(t)
	res := b.rec.Results()
	if res[driver.ResultDelivered] != 1 || res[driver.ResultFailed] != deliver.BreakerThresholdDefault+2 {
		t.Fatalf("results %v: want every Like refused for good and the Create delivered", res)
	}
	for _, a := range b.rec.Attempts() {
		if a.Outcome == deliver.AttemptHeld {
			t.Fatalf("a delivery was held: %+v", a)
		}
	}
}

// PeerTube answers 403 to any RFC 9421 signature: a Deliverer starting
// with RFC 9421 must knock again with cavage, and remember it.
func TestPeerTube403ToRFC9421GetsCavageKnock(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *deliver.Config) { c.FirstScheme = sig.SchemeRFC9421 })
	ib := peerInbox(t, b, peerTube)
	b.send(t, "1", ib.URL("/inbox"))
	b.runDue(t)
	b.send(t, "2", ib.URL("/inbox"))
	b.runDue(t)
	want := []sig.Scheme{sig.SchemeRFC9421, sig.SchemeCavage, sig.SchemeCavage}
	if got := schemesSeen(ib); !slices.Equal(got, want) {
		t.Fatalf("requests %v, want %v", got, want)
	}
	if res := b.rec.Results(); res[driver.ResultDelivered] != 2 {
		t.Fatalf("results %v", res)
	}
}

// PeerTube's 403 to a remembered cavage is a refusal for good, not a
// signature problem: no second knock.
func TestPeerTube403WithCavageRememberedOneKnock(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *deliver.Config) { c.FirstScheme = sig.SchemeCavage })
	ib := newInbox(t, b.clock, func(r *http.Request, n int) (int, http.Header) {
		if n == 1 {
			return 202, nil
		}
		return 403, nil
	})
	b.send(t, "1", ib.URL("/inbox"))
	b.runDue(t)
	b.send(t, "2", ib.URL("/inbox"))
	b.runDue(t)
	if n := len(ib.requests()); n != 2 {
		t.Fatalf("%d requests, want one per activity", n)
	}
}

// Fedify's cavage verifier is RSA-only and throws on Ed25519 (500): an
// Ed25519 sender signs RFC 9421 first by default.
func TestFedifyEd25519SenderSignsRFC9421First(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ib := peerInbox(t, b, fedify)
	b.send(t, "1", ib.URL("/inbox"))
	b.runDue(t)
	if got := schemesSeen(ib); !slices.Equal(got, []sig.Scheme{sig.SchemeRFC9421}) {
		t.Fatalf("requests %v, want one RFC 9421", got)
	}
	if res := b.rec.Results(); res[driver.ResultDelivered] != 1 {
		t.Fatalf("results %v", res)
	}
}

// An explicit FirstScheme wins over the key's default, and a 500 is no
// signature refusal: no second knock.
func TestFedifyEd25519CavageConfigured500NoKnock(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *deliver.Config) { c.FirstScheme = sig.SchemeCavage })
	ib := peerInbox(t, b, fedify)
	b.send(t, "1", ib.URL("/inbox"))
	b.runDue(t)
	if got := schemesSeen(ib); !slices.Equal(got, []sig.Scheme{sig.SchemeCavage}) {
		t.Fatalf("requests %v, want one cavage", got)
	}
}

func hostOf(ib *inbox) string { return strings.TrimPrefix(ib.srv.URL, "http://") }

// An Ed25519 sender knocks with RFC 9421 first; GoToSocial's 401 to it and
// its 400 to the cavage knock mean it read cavage and refused the Like: the
// 400 stands, refused for good, and no breaker failure is counted.
func TestGoToSocialContentRefusalAfterRFC9421Knock(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *deliver.Config) { c.Permanent = deliver.MastodonPermanent })
	ib := peerInbox(t, b, goToSocial)
	b.sendLike(t, "like", ib.URL("/inbox"))
	b.runDue(t)
	want := []sig.Scheme{sig.SchemeRFC9421, sig.SchemeCavage}
	if got := schemesSeen(ib); !slices.Equal(got, want) {
		t.Fatalf("requests %v, want %v", got, want)
	}
	if f := b.rec.Failures(); len(f) != 1 || f[0].StatusCode != 400 {
		t.Fatalf("failures %+v, want the 400", f)
	}
}

// An answer to the second knock that is no signature refusal is the
// server's word on the delivery: a 503 from a cavage-only server that
// refused RFC 9421 with 401 is retried, not the 401 refused for good.
func TestSecondKnock503Stands(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *deliver.Config) { c.FirstScheme = sig.SchemeRFC9421 })
	ib := newInbox(t, b.clock, func(r *http.Request, _ int) (int, http.Header) {
		if r.Header.Get("Signature-Input") != "" {
			return 401, nil
		}
		return 503, nil
	})
	b.send(t, "1", ib.URL("/inbox"))
	b.runDue(t)
	atts := b.rec.Attempts()
	if len(atts) != 1 || atts[0].StatusCode != 503 || atts[0].Scheme != sig.SchemeCavage {
		t.Fatalf("attempts %+v, want the 503 under cavage", atts)
	}
	if f := b.rec.Failures(); len(f) != 0 {
		t.Fatalf("refused for good: %+v", f)
	}
}
