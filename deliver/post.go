package deliver

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"io"
	"net/http"
	"runtime"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver/colsync"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/sig"
)

var errSign = errors.New("deliver: signing failed")

// send posts j's activity, signed afresh, and returns the answer that
// stands: its status, its Retry-After, and the scheme it was signed with.
//
// A host with a scheme remembered as accepted gets that scheme, and a
// second knock only when its refusal carries an Accept-Signature, or it is
// remembered as RFC 9421 and answers 401 or 403 (negotiate.go); a
// draft-cavage host remembered for ReprobeAfter is probed with RFC 9421 as
// if none were remembered (reprobe.go). Otherwise a refusal is about the
// activity, not the signature (GoToSocial answers 400 to a correctly
// signed Like of a status it does not have). A host with none remembered
// gets the first scheme (the
// configured one, or the key's: see firstScheme), and on a refusal (400,
// 401 or 403) one knock with the other; PeerTube answers 403 to any RFC
// 9421 signature. When the second knock is refused too (400, 401 or 403,
// or no answer), the first answer stands, since it is what the server said
// to the scheme it reads, with one exception: a 401 or 403 to the first
// followed by a 400 to the second means the server read the second and
// refused the content. Any other answer to the second knock (a 2xx, a 5xx,
// a 410) is the server's word on the delivery and stands.
func (d *Deliverer) send(ctx context.Context, j *driver.Job, host string, key crypto.Signer, rs *runSlot) (int, time.Duration, sig.Scheme, error) {
	e := j.Envelope
	first := d.firstScheme(key)
	remembered, known, probe := d.recall(ctx, host)
	if known {
		first = remembered
	}
	if probe {
		// Knock as for a host with none remembered: a refusal gets the
		// draft-cavage knock, and whichever is accepted is remembered.
		first, known = sig.SchemeRFC9421, false
	}
	var syncHeader string
	if e.SynchronizeCollection && d.cfg.Followers != nil {
		syncHeader = d.syncHeader(ctx, e, j.Inbox)
	}
	signer, err := d.signerFor(e.KeyID, key)
	if err != nil {
		return 0, 0, 0, errors.Join(errSign, err)
	}
	k1 := d.firstKnock(host, signer, first, known)
	status, retryAfter, accept, err := d.post(ctx, j, k1, syncHeader, rs)
	if err != nil {
		return status, retryAfter, first, err
	}
	if ok2xx(status) {
		if !known || first != remembered {
			d.rememberScheme(ctx, host, first)
		}
		return status, retryAfter, first, nil
	}
	if !signatureRefusal(status) {
		return status, retryAfter, first, nil
	}
	k2, ok := d.secondKnock(ctx, j, host, signer, first, known, status, accept)
	if !ok {
		return status, retryAfter, first, nil
	}
	second := k2.scheme
	status2, retryAfter2, _, err := d.post(ctx, j, k2, syncHeader, rs)
	switch {
	case err != nil && ctx.Err() != nil:
		// Cut off: the caller returns the delivery to the queue.
		return status2, retryAfter2, second, err
	case err == nil && !signatureRefusal(status2):
		// Delivered, or an answer about the delivery itself (a 503, a
		// 410) from a server that read the second scheme.
		if ok2xx(status2) {
			d.rememberScheme(ctx, host, second)
			d.negotiated.remember(host, k2.asked)
		}
		return status2, retryAfter2, second, nil
	case err == nil && status2 == http.StatusBadRequest && status != http.StatusBadRequest:
		return status2, retryAfter2, second, nil
	}
	return status, retryAfter, first, nil
}

// firstScheme is the scheme for a host with none remembered: FirstScheme
// when set, else RFC 9421 for an Ed25519 key, whose draft-cavage
// signature Fedify's RSA-only verifier answers with 500, and draft-cavage
// for the rest, which every server reads.
func (d *Deliverer) firstScheme(key crypto.Signer) sig.Scheme {
	if d.cfg.FirstScheme != 0 {
		return d.cfg.FirstScheme
	}
	if _, ok := key.Public().(ed25519.PublicKey); ok {
		return sig.SchemeRFC9421
	}
	return sig.SchemeCavage
}

func (d *Deliverer) rememberScheme(ctx context.Context, host string, s sig.Scheme) {
	d.schemeLog.note(d.learn(ctx, host, s), "deliver: scheme store failed", "host", host)
}

// post sends one knock and returns its status, its Retry-After and, on a
// signature refusal, its Accept-Signature; once signed, rs's delivery waits
// on the network and leaves the signers' line.
func (d *Deliverer) post(ctx context.Context, j *driver.Job, k knock, syncHeader string, rs *runSlot) (int, time.Duration, string, error) {
	body := j.Envelope.Body
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.Inbox, bytes.NewReader(body))
	if err != nil {
		return 0, 0, "", err
	}
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	req.Header.Set("Content-Type", d.cfg.ContentType)
	if syncHeader != "" {
		req.Header.Set(colsync.HeaderName, syncHeader)
	}
	var signErr error
	resp, err := d.client.DoWith(req, &client.DoOpts{Sign: func(r *http.Request) error {
		// Join the back of the scheduler's line before the signers' own.
		// Go's scheduler runs a goroutine woken on the same core (a signer
		// let in as another leaves, a delivery just claimed) ahead of one
		// woken by the network, which waits in the global queue; with the
		// cores busy signing, answers that came back were read only in
		// bursts when the signers ran dry, holding their hosts' slots
		// meanwhile (a fan-out's first 500 deliveries took 0.7 s instead of
		// 0.35). Yielding here puts every signature behind the answers
		// already in.
		runtime.Gosched()
		d.signing <- struct{}{}
		err := k.sign(r)
		<-d.signing
		rs.waiting()
		if err != nil {
			signErr = errors.Join(errSign, err)
			return signErr
		}
		return nil
	}})
	if signErr != nil {
		return 0, 0, "", signErr
	}
	if err != nil {
		return 0, 0, "", err
	}
	// Drain a little so the connection can be reused; the body is never
	// echoed, since a remote server controls it.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	var retryAfter time.Duration
	if v := resp.Header.Get("Retry-After"); v != "" {
		if ra, ok := ParseRetryAfter(v, d.cfg.Now()); ok {
			retryAfter = ra
		}
	}
	var accept string
	if signatureRefusal(resp.StatusCode) {
		accept = resp.Header.Get(sig.AcceptSignatureHeader)
	}
	return resp.StatusCode, retryAfter, accept, nil
}

func (d *Deliverer) syncHeader(ctx context.Context, e *driver.Envelope, inbox string) string {
	origin, err := colsync.Origin(inbox)
	if err != nil {
		return ""
	}
	f, err := d.cfg.Followers.FollowersOn(ctx, e.ActorID, origin)
	if err != nil {
		d.log.Warn("deliver: followers for synchronization not loaded", "actor", e.ActorID, "err", err)
		return ""
	}
	if f.CollectionID == "" {
		return ""
	}
	return f.HeaderFor(origin).String()
}
