package inbox

import (
	"net/http"

	"github.com/fedkit/fedkit/sig"
)

// acceptSignature adds an Accept-Signature field (RFC 9421 section 5) to
// a refusal of the signature, saying what v accepts, so that a sender that
// negotiates (Fedify, fedkit's deliver) signs as asked on its second knock.
// Other refusals (a body too large, a gone signer) are not about the shape
// of the signature and get none.
func acceptSignature(w http.ResponseWriter, v *sig.Verifier, r *http.Request, reason Reason) {
	switch reason {
	case ReasonMalformedSignature, ReasonNoSignature, ReasonBadSignature:
	default:
		return
	}
	a := v.AcceptSignature(r)
	w.Header().Set(sig.AcceptSignatureHeader, a.String())
}
