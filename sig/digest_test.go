package sig_test

import (
	"errors"
	"testing"

	"github.com/fedkit/fedkit/sig"
)

// RFC 9530 examples: the body {"hello": "world"} and the empty body.
const (
	helloBody   = `{"hello": "world"}`
	helloSHA256 = "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:"
	helloSHA512 = "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"
	emptySHA256 = "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:"
)

func TestContentDigest(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		algs       []string
		want       string
	}{
		{"RFC 9530 sha-256", helloBody, nil, helloSHA256},
		{"RFC 9530 sha-512", helloBody, []string{"sha-512"}, helloSHA512},
		{"RFC 9530 both", helloBody, []string{"sha-256", "sha-512"}, helloSHA256 + ", " + helloSHA512},
		{"RFC 9530 empty body", "", nil, emptySHA256},
		{"Directory fixture", `{"type":"Follow"}`, nil, "sha-256=:GYwYnH3BiO6aICFt0ThC5bUIJ4byvqdpWtR8m5fNkww=:"},
		{"unknown skipped", helloBody, []string{"md5", "sha-256"}, helloSHA256},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := sig.ContentDigest([]byte(tc.body), tc.algs...); got != tc.want {
				t.Fatalf("ContentDigest = %q, want %q", got, tc.want)
			}
			if err := sig.VerifyContentDigest([]string{tc.want}, []byte(tc.body)); err != nil {
				t.Fatalf("VerifyContentDigest: %v", err)
			}
		})
	}
}

func TestVerifyContentDigest(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		lines []string
		want  error
	}{
		{"sha-256", []string{helloSHA256}, nil},
		{"two lines", []string{helloSHA512, helloSHA256}, nil},
		{"unknown alg alongside", []string{"unixsum=:AAAA:, " + helloSHA256}, nil},
		{"only unknown", []string{"md5=:HJgxRa2uWpXiJdF2vDq1zg==:"}, sig.ErrDigestMismatch},
		{"one of two wrong", []string{helloSHA256 + ", " + "sha-512=:AAAA:"}, sig.ErrDigestMismatch},
		{"wrong", []string{emptySHA256}, sig.ErrDigestMismatch},
		{"not a byte sequence", []string{`sha-256="X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="`}, sig.ErrMalformed},
		{"not a dictionary", []string{"sha-256=:not base64"}, sig.ErrMalformed},
		{"inner list", []string{"sha-256=(a b)"}, sig.ErrMalformed},
		{"empty", []string{""}, sig.ErrMalformed},
		{"absent", nil, sig.ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := sig.VerifyContentDigest(tc.lines, []byte(helloBody))
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("VerifyContentDigest = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestDigestRFC3230(t *testing.T) {
	t.Parallel()
	if got := sig.Digest([]byte(helloBody)); got != "SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=" {
		t.Fatalf("Digest = %q", got)
	}
	cases := []struct {
		name  string
		lines []string
		want  error
	}{
		{"cavage C.3", []string{"SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="}, nil},
		{"lower case name", []string{"sha-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="}, nil},
		{"with unknown", []string{"MD5=HJgxRa2uWpXiJdF2vDq1zg==, SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="}, nil},
		{"sha-512", []string{"SHA-512=WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew=="}, nil},
		{"mismatch", []string{"SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}, sig.ErrDigestMismatch},
		{"only unknown", []string{"MD5=HJgxRa2uWpXiJdF2vDq1zg=="}, sig.ErrDigestMismatch},
		{"not base64", []string{"SHA-256=%%%"}, sig.ErrMalformed},
		{"no equals", []string{"SHA-256"}, sig.ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := sig.VerifyDigest(tc.lines, []byte(helloBody))
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("VerifyDigest = %v, want %v", err, tc.want)
			}
		})
	}
}
