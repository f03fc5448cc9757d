package sig_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/sig"
)

// draft-cavage-http-signatures-12 Appendix C: the test key pair, the
// request of C.1-C.3 and their signatures.
const (
	cavageTestPrivateKey = `-----BEGIN RSA PRIVATE KEY-----
MIICXgIBAAKBgQDCFENGw33yGihy92pDjZQhl0C36rPJj+CvfSC8+q28hxA161QF
NUd13wuCTUcq0Qd2qsBe/2hFyc2DCJJg0h1L78+6Z4UMR7EOcpfdUE9Hf3m/hs+F
UR45uBJeDK1HSFHD8bHKD6kv8FPGfJTotc+2xjJwoYi+1hqp1fIekaxsyQIDAQAB
AoGBAJR8ZkCUvx5kzv+utdl7T5MnordT1TvoXXJGXK7ZZ+UuvMNUCdN2QPc4sBiA
QWvLw1cSKt5DsKZ8UETpYPy8pPYnnDEz2dDYiaew9+xEpubyeW2oH4Zx71wqBtOK
kqwrXa/pzdpiucRRjk6vE6YY7EBBs/g7uanVpGibOVAEsqH1AkEA7DkjVH28WDUg
f1nqvfn2Kj6CT7nIcE3jGJsZZ7zlZmBmHFDONMLUrXR/Zm3pR5m0tCmBqa5RK95u
412jt1dPIwJBANJT3v8pnkth48bQo/fKel6uEYyboRtA5/uHuHkZ6FQF7OUkGogc
mSJluOdc5t6hI1VsLn0QZEjQZMEOWr+wKSMCQQCC4kXJEsHAve77oP6HtG/IiEn7
kpyUXRNvFsDE0czpJJBvL/aRFUJxuRK91jhjC68sA7NsKMGg5OXb5I5Jj36xAkEA
gIT7aFOYBFwGgQAQkWNKLvySgKbAZRTeLBacpHMuQdl1DfdntvAyqpAZ0lY0RKmW
G6aFKaqQfOXKCyWoUiVknQJAXrlgySFci/2ueKlIE1QqIiLSZ8V8OlpFLRnb1pzI
7U1yQXnTAEFYM560yJlzUpOb1V4cScGd365tiSMvxLOvTA==
-----END RSA PRIVATE KEY-----`
	cavageTestPublicKey = `-----BEGIN PUBLIC KEY-----
MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDCFENGw33yGihy92pDjZQhl0C3
6rPJj+CvfSC8+q28hxA161QFNUd13wuCTUcq0Qd2qsBe/2hFyc2DCJJg0h1L78+6
Z4UMR7EOcpfdUE9Hf3m/hs+FUR45uBJeDK1HSFHD8bHKD6kv8FPGfJTotc+2xjJw
oYi+1hqp1fIekaxsyQIDAQAB
-----END PUBLIC KEY-----`
	cavageBody = `{"hello": "world"}`
)

func cavageRequest(t *testing.T) *http.Request {
	t.Helper()
	r, err := http.NewRequest("POST", "http://example.com/foo?param=value&pet=dog", strings.NewReader(cavageBody))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Date", "Sun, 05 Jan 2014 21:31:40 GMT")
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Digest", "SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=")
	r.Header.Set("Content-Length", "18")
	return r
}

func TestCavageAppendixC(t *testing.T) {
	t.Parallel()
	pub, err := sig.ParsePublicKeyPEM([]byte(cavageTestPublicKey))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, header, signingString string
	}{
		{"C.1 Default Test",
			`Signature keyId="Test",algorithm="rsa-sha256",signature="SjWJWbWN7i0wzBvtPl8rbASWz5xQW6mcJmn+ibttBqtifLN7Sazz6m79cNfwwb8DMJ5cou1s7uEGKKCs+FLEEaDV5lp7q25WqS+lavg7T8hc0GppauB6hbgEKTwblDHYGEtbGmtdHgVCk9SuS13F0hZ8FD0k/5OxEPXe5WozsbM="`,
			"date: Sun, 05 Jan 2014 21:31:40 GMT"},
		{"C.2 Basic Test",
			`keyId="Test",algorithm="rsa-sha256",headers="(request-target) host date",signature="qdx+H7PHHDZgy4y/Ahn9Tny9V3GP6YgBPyUXMmoxWtLbHpUnXS2mg2+SbrQDMCJypxBLSPQR2aAjn7ndmw2iicw3HMbe8VfEdKFYRqzic+efkb3nndiv/x1xSHDJWeSWkx3ButlYSuBskLu6kd9Fswtemr3lgdDEmn04swr2Os0="`,
			"(request-target): post /foo?param=value&pet=dog\nhost: example.com\ndate: Sun, 05 Jan 2014 21:31:40 GMT"},
		{"C.3 All Headers Test",
			`keyId="Test",algorithm="rsa-sha256",headers="(request-target) host date content-type digest content-length",signature="vSdrb+dS3EceC9bcwHSo4MlyKS59iFIrhgYkz8+oVLEEzmYZZvRs8rgOp+63LEM3v+MFHB32NfpB2bEKBIvB1q52LaEUHFv120V01IL+TAD48XaERZFukWgHoBTLMhYS2Gb51gWxpeIq8knRmPnYePbF5MOkR0Zkly4zKH7s1dE="`,
			"(request-target): post /foo?param=value&pet=dog\nhost: example.com\ndate: Sun, 05 Jan 2014 21:31:40 GMT\ncontent-type: application/json\ndigest: SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=\ncontent-length: 18"},
		{"C.3 as hs2019",
			`keyId="Test",algorithm="hs2019",headers="content-length digest content-type date host (request-target)",signature="AAAA"`,
			"content-length: 18\ndigest: SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=\ncontent-type: application/json\ndate: Sun, 05 Jan 2014 21:31:40 GMT\nhost: example.com\n(request-target): post /foo?param=value&pet=dog"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := cavageRequest(t)
			cs, err := sig.ParseCavageSignature(tc.header)
			if err != nil {
				t.Fatal(err)
			}
			got, err := sig.CavageSigningString(req, cs)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.signingString {
				t.Fatalf("signing string\n%q\nwant\n%q", got, tc.signingString)
			}
			if err := sig.VerifyDigest(req.Header.Values("Digest"), []byte(cavageBody)); err != nil {
				t.Fatalf("Digest: %v", err)
			}
			err = sig.VerifyCavage(req, cs, pub)
			if strings.HasPrefix(tc.name, "C.3 as") {
				if !errors.Is(err, sig.ErrBadSignature) {
					t.Fatalf("reordered headers verified: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("VerifyCavage: %v", err)
			}
		})
	}
}

func TestParseCavageSignature(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		ok       bool
		headers  string
	}{
		{"spaces after commas", `keyId="k", algorithm="rsa-sha256", headers="(request-target) host", signature="YQ=="`, true, "(request-target) host"},
		{"authorization prefix", `Signature keyId="k",signature="YQ=="`, true, "date"},
		{"created unquoted", `keyId="k",created=1402170695,headers="(created)",signature="YQ=="`, true, "(created)"},
		{"upper-case headers", `keyId="k",headers="Date Host",signature="YQ=="`, true, "date host"},
		{"no keyId", `signature="YQ=="`, false, ""},
		{"no signature", `keyId="k"`, false, ""},
		{"unterminated", `keyId="k,signature="YQ=="`, false, ""},
		{"duplicate", `keyId="k",keyId="j",signature="YQ=="`, false, ""},
		{"bad created", `keyId="k",created=-1,signature="YQ=="`, false, ""},
		{"garbage between", `keyId="k" x signature="YQ=="`, false, ""},
		{"empty headers", `keyId="k",headers="",signature="YQ=="`, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := sig.ParseCavageSignature(tc.in)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if err != nil {
				if !errors.Is(err, sig.ErrMalformed) {
					t.Errorf("error %v is not ErrMalformed", err)
				}
				return
			}
			if got := strings.Join(cs.Headers, " "); got != tc.headers {
				t.Errorf("headers = %q, want %q", got, tc.headers)
			}
			again, err := sig.ParseCavageSignature(cs.String())
			if err != nil || again.String() != cs.String() {
				t.Errorf("String does not round-trip: %q, %v", cs.String(), err)
			}
		})
	}
}
