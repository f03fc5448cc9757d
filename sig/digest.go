package sig

import (
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/dunglas/httpsfv"
)

// Content-Digest algorithm names (RFC 9530).
const (
	DigestSHA256 = "sha-256"
	DigestSHA512 = "sha-512"
)

// maxDigestHeader bounds the digest headers we parse.
const maxDigestHeader = 8 << 10

// sum digests body with alg, compared case-insensitively.
func sum(alg string, body []byte) ([]byte, bool) {
	switch {
	case strings.EqualFold(alg, DigestSHA256):
		s := sha256.Sum256(body)
		return s[:], true
	case strings.EqualFold(alg, DigestSHA512):
		s := sha512.Sum512(body)
		return s[:], true
	}
	return nil, false
}

func knownDigest(alg string) bool {
	return strings.EqualFold(alg, DigestSHA256) || strings.EqualFold(alg, DigestSHA512)
}

// ContentDigest returns an RFC 9530 Content-Digest value for body with the
// given algorithms ("sha-256", "sha-512"), in that order; with none, it
// uses sha-256. An unknown algorithm is skipped.
func ContentDigest(body []byte, algs ...string) string {
	if len(algs) == 0 {
		algs = []string{DigestSHA256}
	}
	var b strings.Builder
	for _, a := range algs {
		s, ok := sum(a, body)
		if !ok {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strings.ToLower(a))
		b.WriteString("=:")
		b.WriteString(base64.StdEncoding.EncodeToString(s))
		b.WriteByte(':')
	}
	return b.String()
}

// DigestValue is one member of a digest field.
type DigestValue struct {
	Alg string // lower case, e.g. "sha-256"
	Sum []byte
}

// ParseContentDigest parses a Content-Digest (or Repr-Digest) field, given
// as its field lines. Members whose value is not a byte sequence are
// refused; unknown algorithms are kept.
func ParseContentDigest(lines []string) ([]DigestValue, error) {
	if n := linesLen(lines); n == 0 || n > maxDigestHeader {
		return nil, fmt.Errorf("%w: Content-Digest of %d bytes", ErrMalformed, n)
	}
	if fm, ok := fastBytesDict(lines); ok {
		out := make([]DigestValue, len(fm))
		for i, m := range fm {
			out[i] = DigestValue{Alg: m.key, Sum: m.val}
		}
		return out, nil
	}
	return slowContentDigest(lines)
}

// slowContentDigest parses with httpsfv what the fast parser leaves.
func slowContentDigest(lines []string) ([]DigestValue, error) {
	d, err := httpsfv.UnmarshalDictionary(lines)
	if err != nil {
		return nil, fmt.Errorf("%w: Content-Digest: %v", ErrMalformed, err)
	}
	var out []DigestValue
	for _, name := range d.Names() {
		m, _ := d.Get(name)
		it, ok := m.(httpsfv.Item)
		if !ok {
			return nil, fmt.Errorf("%w: Content-Digest member %q is a list", ErrMalformed, name)
		}
		b, ok := it.Value.([]byte)
		if !ok {
			return nil, fmt.Errorf("%w: Content-Digest member %q is not a byte sequence", ErrMalformed, name)
		}
		out = append(out, DigestValue{Alg: name, Sum: b})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: empty Content-Digest", ErrMalformed)
	}
	return out, nil
}

// VerifyContentDigest checks a Content-Digest field against body. Every
// member with an algorithm we know must match, and at least one must be
// known; otherwise it returns ErrDigestMismatch (or ErrMalformed).
func VerifyContentDigest(lines []string, body []byte) error {
	if n := linesLen(lines); n > 0 && n <= maxDigestHeader {
		// The common shape, checked without building the values; a
		// mismatch is reported only once the whole field has parsed.
		var mismatch string
		known := 0
		ok := scanBytesDict(lines, func(alg, enc string) bool {
			var buf [64]byte
			var src [128]byte
			if len(enc) > len(src) || base64.StdEncoding.DecodedLen(len(enc)) > len(buf) {
				return false // longer than any digest we know: the slow path
			}
			n, err := base64.StdEncoding.Decode(buf[:], src[:copy(src[:], enc)])
			if err != nil {
				return false
			}
			if k, match := digestMatches(alg, buf[:n], body); k {
				known++
				if !match && mismatch == "" {
					mismatch = alg
				}
			}
			return true
		})
		if ok {
			return digestResult(known, mismatch)
		}
	}
	vals, err := ParseContentDigest(lines)
	if err != nil {
		return err
	}
	return checkDigests(vals, body)
}

func checkDigests(vals []DigestValue, body []byte) error {
	known := 0
	for _, v := range vals {
		k, match := digestMatches(v.Alg, v.Sum, body)
		if !k {
			continue
		}
		known++
		if !match {
			return digestResult(known, v.Alg)
		}
	}
	return digestResult(known, "")
}

func digestResult(known int, mismatch string) error {
	if mismatch != "" {
		return fmt.Errorf("%w: %s", ErrDigestMismatch, mismatch)
	}
	if known == 0 {
		return fmt.Errorf("%w: no supported digest algorithm", ErrDigestMismatch)
	}
	return nil
}

// digestMatches reports whether alg is one we know and, if so, whether
// want is body's digest. The sums stay on the stack.
func digestMatches(alg string, want, body []byte) (known, match bool) {
	switch {
	case strings.EqualFold(alg, DigestSHA256):
		s := sha256.Sum256(body)
		return true, subtle.ConstantTimeCompare(s[:], want) == 1
	case strings.EqualFold(alg, DigestSHA512):
		s := sha512.Sum512(body)
		return true, subtle.ConstantTimeCompare(s[:], want) == 1
	}
	return false, false
}

// Digest returns an RFC 3230 Digest value, "SHA-256=<base64>", as
// draft-cavage signers send it.
func Digest(body []byte) string {
	s := sha256.Sum256(body)
	return "SHA-256=" + base64.StdEncoding.EncodeToString(s[:])
}

// ParseDigest parses an RFC 3230 Digest field: comma-separated
// "algorithm=base64" instances, algorithm names case-insensitive.
// Instances of algorithms we do not know are kept with a nil Sum.
func ParseDigest(lines []string) ([]DigestValue, error) {
	if n := linesLen(lines); n == 0 || n > maxDigestHeader {
		return nil, fmt.Errorf("%w: Digest of %d bytes", ErrMalformed, n)
	}
	var out []DigestValue
	for _, line := range lines {
		for part := range strings.SplitSeq(line, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			alg, val, ok := strings.Cut(part, "=")
			if !ok || alg == "" {
				return nil, fmt.Errorf("%w: Digest instance without '='", ErrMalformed)
			}
			alg = strings.TrimSpace(alg)
			switch {
			case strings.EqualFold(alg, DigestSHA256):
				alg = DigestSHA256 // spares lower-casing the usual "SHA-256"
			case strings.EqualFold(alg, DigestSHA512):
				alg = DigestSHA512
			default:
				alg = strings.ToLower(alg)
			}
			dv := DigestValue{Alg: alg}
			if knownDigest(alg) {
				b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(val))
				if err != nil {
					return nil, fmt.Errorf("%w: Digest %s is not base64", ErrMalformed, alg)
				}
				dv.Sum = b
			}
			out = append(out, dv)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: empty Digest", ErrMalformed)
	}
	return out, nil
}

// VerifyDigest checks an RFC 3230 Digest field against body, with the same
// rule as VerifyContentDigest: all known algorithms match, at least one.
func VerifyDigest(lines []string, body []byte) error {
	vals, err := ParseDigest(lines)
	if err != nil {
		return err
	}
	return checkDigests(vals, body)
}
