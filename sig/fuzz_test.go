package sig_test

import (
	"crypto"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/sig"
)

// Fuzz targets for every parser that reads remote input. Seeds live in
// testdata/fuzz/<Name>/ as well as here.

func FuzzParseCavageSignature(f *testing.F) {
	f.Add(`keyId="Test",algorithm="rsa-sha256",headers="(request-target) host date",signature="qdx+H7PHHDZgy4y/Ahn9Tny9V3GP6YgBPyUXMmoxWtLbHpUnXS2mg2+SbrQDMCJypxBLSPQR2aAjn7ndmw2iicw3HMbe8VfEdKFYRqzic+efkb3nndiv/x1xSHDJWeSWkx3ButlYSuBskLu6kd9Fswtemr3lgdDEmn04swr2Os0="`)
	f.Add(`Signature keyId="k",created=1402170695,expires=1402170699,headers="(created) (expires)",signature="YQ=="`)
	f.Add(`keyId="k", signature="YQ==", headers=""`)
	f.Add(`keyId=,,,=`)
	f.Fuzz(func(t *testing.T, in string) {
		cs, err := sig.ParseCavageSignature(in)
		if err != nil {
			return
		}
		if len(cs.Headers) == 0 || cs.KeyID == "" || len(cs.Signature) == 0 {
			t.Fatalf("accepted an incomplete signature: %+v", cs)
		}
		// What we write must parse back to the same thing, when the key ID
		// is writable (no quote).
		if strings.ContainsAny(cs.KeyID+cs.Algorithm+strings.Join(cs.Headers, ""), `"`) {
			return
		}
		again, err := sig.ParseCavageSignature(cs.String())
		if err != nil || again.String() != cs.String() {
			t.Fatalf("round trip: %q -> %q (%v)", in, cs.String(), err)
		}
		req, _ := http.NewRequest("GET", "https://a.example/x?y", nil)
		req.Header.Set("Date", "Tue, 20 Apr 2021 02:07:55 GMT")
		_, _ = sig.CavageSigningString(req, cs)
	})
}

func FuzzParseRFC9421Signatures(f *testing.F) {
	f.Add(`sig-b22=("@authority" "content-digest" "@query-param";name="Pet");created=1618884473;keyid="test-key-rsa-pss";tag="header-example"`, `sig-b22=:YQ==:`)
	f.Add(`directory=("@method" "@authority" "@target-uri" "content-digest" "content-type" "date");keyid="https://relay.example/actor#main-key";alg="rsa-v1_5-sha256";tag="activity-relay-directory-v1";nonce="n";created=1785933296;expires=1785933596`, `directory=:YQ==:`)
	f.Add(`a=("example-dict";key="a" "x";bs "@status" "y";req;sf), b=()`, `a=:YQ==:, b=:Yg==:`)
	f.Add(`a=1`, `a=2`)
	f.Fuzz(func(t *testing.T, input, signature string) {
		h := http.Header{"Signature-Input": {input}, "Signature": {signature}}
		sigs, err := sig.ParseRFC9421Signatures(h)
		if err != nil {
			return
		}
		req, _ := http.NewRequest("POST", "https://example.com/foo?param=Value&Pet=dog", nil)
		req.Header.Set("Example-Dict", "a=1, b=2;x=1;y=2, c=(a b c), d")
		req.Header.Set("X", "x")
		for _, s := range sigs {
			// Must not panic whatever the components are.
			_ = sig.VerifyRFC9421(req, s, []byte("secret"), sig.AlgHMACSHA256)
			_, _, _ = sig.RFC9421SignatureBase(req, &sig.SignOpts{Components: s.Components()})
		}
	})
}

func FuzzParseContentDigest(f *testing.F) {
	f.Add(helloSHA256)
	f.Add(helloSHA256 + ", " + helloSHA512)
	f.Add("unixsum=:AAAA:, sha-256=(a b)")
	f.Add("SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=")
	f.Fuzz(func(t *testing.T, in string) {
		body := []byte(helloBody)
		if vals, err := sig.ParseContentDigest([]string{in}); err == nil {
			if len(vals) == 0 {
				t.Fatal("no values and no error")
			}
			_ = sig.VerifyContentDigest([]string{in}, body)
		}
		if vals, err := sig.ParseDigest([]string{in}); err == nil {
			if len(vals) == 0 {
				t.Fatal("no values and no error")
			}
			_ = sig.VerifyDigest([]string{in}, body)
		}
	})
}

func FuzzParseMultikey(f *testing.F) {
	f.Add(w3cPublicKeyMultibase)
	f.Add("zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169")
	f.Add("z")
	f.Add("mAQID")
	f.Fuzz(func(t *testing.T, in string) {
		pub, err := sig.ParseMultikey(in)
		if err != nil {
			return
		}
		out, err := sig.FormatMultikey(pub)
		if err != nil {
			t.Fatalf("FormatMultikey of a parsed key: %v", err)
		}
		back, err := sig.ParseMultikey(out)
		if err != nil || !back.(interface{ Equal(crypto.PublicKey) bool }).Equal(pub) {
			t.Fatalf("round trip of %q changed the key (%v)", in, err)
		}
	})
}

func FuzzParsePublicKeyPEM(f *testing.F) {
	f.Add(rfcKeyRSAPSSPublic)
	f.Add(rfcKeyRSAPublic)
	f.Add(rfcKeyEd25519Public)
	f.Add(rfcKeyECCPublic)
	// SPKI under id-RSASSA-PSS around test-key-rsa-pss's RSAPublicKey.
	f.Add("-----BEGIN PUBLIC KEY-----\nMIIBIDALBgkqhkiG9w0BAQoDggEPADCCAQoCggEBAK+LZpt69tFnfz26rz9bNvkBLb6bkWlfGKuNII1EfMtkY8WunaRthlx2z37zLPHLfi4dRh+OcdvEcN0cud5pvqAF48kPOjpw5GeTfJWG4IA+Dt8OjOqQLy5IZPeQJ3U64n2yBTzVPDzzDuzsqxQB6oA7M54zxZkzrQhHDdmdRaVoHIcLmCzy/lqJKpbXddZ6qs4vmyfXL0igA2HVAADeVlLc3aYsui204EsT+6HIlOE59IOSOmg2SewPC86NCksmWKAOPOZqnDtBlQHVcPZauGjk/b+nfp2+G5zZEFZJS0N31QLyZvsXQzqfSwjQjePFdqZwzpBVevlPZ1eaMnOlyNsCAwEAAQ==\n-----END PUBLIC KEY-----\n")
	f.Add("-----BEGIN PUBLIC KEY-----\nMAA=\n-----END PUBLIC KEY-----\n")
	f.Fuzz(func(t *testing.T, in string) {
		pub, err := sig.ParsePublicKeyPEM([]byte(in))
		if err != nil {
			return
		}
		out, err := sig.MarshalPublicKeyPEM(pub)
		if err != nil {
			t.Fatalf("MarshalPublicKeyPEM of a parsed key: %v", err)
		}
		back, err := sig.ParsePublicKeyPEM(out)
		if err != nil || !back.(interface{ Equal(crypto.PublicKey) bool }).Equal(pub) {
			t.Fatalf("round trip of %q changed the key (%v)", in, err)
		}
	})
}

func FuzzParseAcceptSignature(f *testing.F) {
	f.Add(`sig1=("@method" "@target-uri" "@authority" "content-digest" "cache-control");keyid="test-key-rsa-pss";created;tag="app-123"`)
	f.Add(`a=("@query-param";name="pet" "example-dict";sf);nonce;expires, b=("@method")`)
	f.Add(`s=("@method");created=?0;alg="ed25519"`)
	f.Add(`a=1`)
	f.Fuzz(func(t *testing.T, field string) {
		as, err := sig.ParseAcceptSignature(http.Header{"Accept-Signature": {field}})
		if err != nil {
			if !errors.Is(err, sig.ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		for i := range as {
			// What parsed serialises to a field that parses the same.
			again, err := sig.ParseAcceptSignature(http.Header{"Accept-Signature": {as[i].String()}})
			if err != nil || len(again) != 1 || again[0].Label != as[i].Label || len(again[0].Components) != len(as[i].Components) {
				t.Fatalf("round trip of %q: %+v, %v", as[i].String(), again, err)
			}
		}
	})
}
