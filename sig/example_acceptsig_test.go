package sig_test

import (
	"crypto/ed25519"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/fedkit/fedkit/sig"
)

// A server's 401 asks, with Accept-Signature, for a signature over
// content-type too and with a nonce; the sender signs as asked.
func ExampleSigner_SignAccepted() {
	refusal := http.Header{}
	refusal.Set("Accept-Signature", `sig1=("@method" "@target-uri" "content-type" "content-digest");created;nonce`)
	asked, err := sig.ParseAcceptSignature(refusal)
	if err != nil || len(asked) == 0 {
		fmt.Println("nothing asked:", err)
		return
	}
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	s, _ := sig.NewSigner(key, "https://a.example/actor#main-key",
		&sig.SignerConfig{Now: func() time.Time { return time.Unix(1_800_000_000, 0) }})
	req, _ := http.NewRequest(http.MethodPost, "https://b.example/inbox", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/activity+json")
	if !s.CanSignAccepted(&asked[0]) {
		fmt.Println("cannot sign as asked")
		return
	}
	if err := s.SignAccepted(req, &asked[0]); err != nil {
		fmt.Println(err)
		return
	}
	in := req.Header.Get("Signature-Input")
	fmt.Println(in[:strings.Index(in, ";")])
	fmt.Println(strings.Contains(in, ";nonce="))
	// Output:
	// sig1=("@method" "@target-uri" "content-type" "content-digest")
	// true
}

// The inbound side says what it accepts on its refusals.
func ExampleVerifier_AcceptSignature() {
	v, _ := sig.NewVerifier(sig.KeyResolverFunc(nil), nil)
	req, _ := http.NewRequest(http.MethodPost, "https://b.example/inbox", strings.NewReader(`{}`))
	a := v.AcceptSignature(req)
	fmt.Println(a.String())
	// Output:
	// sig1=("@method" "@target-uri" "@authority" "content-digest");created
}

// ExampleFormatAcceptSignature writes the Accept-Signature of a refusal:
// what an inbox would accept instead.
func ExampleFormatAcceptSignature() {
	fmt.Println(sig.FormatAcceptSignature(sig.AcceptSignature{
		Label:      "sig1",
		Components: []string{`"@method"`, `"@target-uri"`, `"content-digest"`},
		Created:    true,
		Nonce:      true,
	}))
	// Output: sig1=("@method" "@target-uri" "content-digest");created;nonce
}

// ExampleParseAcceptSignature reads what a server asks of a signature.
func ExampleParseAcceptSignature() {
	h := http.Header{}
	h.Set("Accept-Signature", `sig1=("@method" "@target-uri" "content-digest");created;alg="ed25519"`)
	asked, err := sig.ParseAcceptSignature(h)
	fmt.Println(len(asked), asked[0].Label, asked[0].Components, asked[0].Alg, asked[0].Created, asked[0].Nonce, err)
	// Output: 1 sig1 ["@method" "@target-uri" "content-digest"] ed25519 true false <nil>
}
