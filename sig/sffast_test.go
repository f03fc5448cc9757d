package sig

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/dunglas/httpsfv"
)

// The fast parser must agree with httpsfv: on every input it takes, the
// same result; on every input, the same acceptance and errors once the
// fallback runs.

const (
	fastInputSeed = `sig1=("@method" "@target-uri" "@authority" "date" "content-digest");keyid="https://a.example/actor#main-key";alg="rsa-v1_5-sha256";created=1785933296`
	fastSigSeed   = `sig1=:YWJj:`
	helloDigest   = `sha-256=:LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=:`
)

var fastCases = []struct {
	name        string
	input, sign string
	fastInput   bool // fastSigInput takes it
	fastSig     bool // fastBytesDict takes the Signature
}{
	{"signer shape", fastInputSeed, fastSigSeed, true, true},
	{"directory shape", `directory=("@method" "@authority" "@target-uri" "content-digest" "content-type" "date");keyid="k";alg="rsa-v1_5-sha256";tag="activity-relay-directory-v1";nonce="n";created=1785933296;expires=1785933596`, `directory=:YQ==:`, true, true},
	{"rfc b.2.1 shape", `sig-b21=();created=1618884473;keyid="test-key-rsa-pss";nonce="b3k2pp5k7z-50gnwp.yemd"`, `sig-b21=:YQ==:`, true, true},
	{"component params", `a=("example-dict";key="a" "x";bs "@status" "y";req;sf "@query-param";name="Pet")`, `a=:YQ==:`, true, true},
	{"two labels", `a=("@method");created=1, b=("@path");created=2`, `a=:YQ==:,b=:Yg==:`, true, true},
	{"tab around comma", "a=();created=1\t,\tb=()", "a=:YQ==:, b=:Yg==:", true, true},
	{"leading and trailing space", ` a=("@method") `, ` a=:YQ==: `, true, true},
	{"empty inner list", `a=()`, `a=:YQ==:`, true, true},
	{"boolean parameter", `a=("@method");x`, `a=:YQ==:`, true, true},
	{"zero", `a=();created=0`, `a=:YQ==:`, true, true},
	{"space inside list", `a=( "@method")`, `a=:YQ==:`, false, true},
	{"two spaces", `a=("@method"  "@path")`, `a=:YQ==:`, false, true},
	{"space after semicolon", `a=("@method"); created=1`, `a=:YQ==:`, false, true},
	{"leading zero", `a=();created=01`, `a=:YQ==:`, false, true},
	{"negative", `a=();created=-1`, `a=:YQ==:`, false, true},
	{"decimal", `a=();created=1.5`, `a=:YQ==:`, false, true},
	{"sixteen digits", `a=();created=1234567890123456`, `a=:YQ==:`, false, true},
	{"explicit true", `a=("x";sf=?1)`, `a=:YQ==:`, false, true},
	{"false", `a=();x=?0`, `a=:YQ==:`, false, true},
	{"escape", `a=();keyid="a\"b"`, `a=:YQ==:`, false, true},
	{"token", `a=();alg=rsa-sha256`, `a=:YQ==:`, false, true},
	{"duplicate label", `a=(), a=("@method")`, `a=:YQ==:`, false, true},
	{"duplicate parameter", `a=();created=1;created=2`, `a=:YQ==:`, false, true},
	{"item not list", `a=1`, `a=:YQ==:`, false, true},
	{"non-ascii", "a=();keyid=\"\xc3\xa9\"", `a=:YQ==:`, false, true},
	{"trailing comma", `a=(),`, `a=:YQ==:`, false, true},
	{"signature params", fastInputSeed, `sig1=:YWJj:;x`, true, false},
	{"signature newline", fastInputSeed, "sig1=:YW\nJj:", true, false},
	{"signature bad base64", fastInputSeed, `sig1=:YWJ:`, true, false},
	{"signature list", fastInputSeed, `sig1=(:YWJj:)`, true, false},
	{"signature duplicate", fastInputSeed, `sig1=:YQ==:, sig1=:YWJj:`, true, false},
}

func TestFastSFMatchesHTTPSFV(t *testing.T) {
	for _, c := range fastCases {
		t.Run(c.name, func(t *testing.T) {
			if _, ok := fastSigInput([]string{c.input}); ok != c.fastInput {
				t.Errorf("fastSigInput took it: %v, want %v", ok, c.fastInput)
			}
			if _, ok := fastBytesDict([]string{c.sign}); ok != c.fastSig {
				t.Errorf("fastBytesDict took it: %v, want %v", ok, c.fastSig)
			}
			checkFastSF(t, []string{c.input}, []string{c.sign})
		})
	}
}

func TestFastContentDigest(t *testing.T) {
	body := []byte("hello")
	for _, c := range []struct {
		name, field string
		fast        bool
		want        error
	}{
		{"match", helloDigest, true, nil},
		{"mismatch", `sha-256=:YWJj:`, true, ErrDigestMismatch},
		{"unknown only", `md5=:YWJj:`, true, ErrDigestMismatch},
		{"unknown and match", `md5=:YWJj:, ` + helloDigest, true, nil},
		{"mismatch then bad member", `sha-256=:YWJj:, x=1`, false, ErrMalformed},
		{"upper case key", `SHA-256=:YWJj:`, false, ErrMalformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			if ok := scanBytesDict([]string{c.field}, func(string, string) bool { return true }); ok != c.fast {
				t.Errorf("fast path took it: %v, want %v", ok, c.fast)
			}
			err := VerifyContentDigest([]string{c.field}, body)
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("VerifyContentDigest = %v, want %v", err, c.want)
			}
			checkFastDigest(t, []string{c.field}, body)
		})
	}
}

func FuzzFastSF(f *testing.F) {
	for _, c := range fastCases {
		f.Add(c.input, c.sign)
	}
	f.Add(helloDigest+", sha-512=:m3HSJL1i83hdltRq0+o9czGb+8KJDKra4t/3JRlnPKcjI8PZm6XBHXx6zG4UuMXaDEZjR1wuXDre9G9zvN7AQw==:", "")
	f.Fuzz(func(t *testing.T, input, sign string) {
		// A newline stands for a field-line boundary.
		in, sg := strings.Split(input, "\n"), strings.Split(sign, "\n")
		checkFastSF(t, in, sg)
		checkFastDigest(t, in, []byte("hello"))
		checkFastDigest(t, sg, []byte("hello"))
	})
}

func checkFastSF(t *testing.T, in, sg []string) {
	t.Helper()
	if fast, ok := fastSigInput(in); ok {
		d, err := httpsfv.UnmarshalDictionary(in)
		if err != nil {
			t.Fatalf("fast path took %q, httpsfv refuses it: %v", in, err)
		}
		if got, want := describeInput(t, fast), describeInput(t, slowSigInput(d)); got != want {
			t.Fatalf("fast path differs on %q:\n fast %s\n slow %s", in, got, want)
		}
		for _, m := range fast {
			il, _ := d.Get(m.label)
			ser, err := httpsfv.Marshal(httpsfv.List{il})
			if err != nil || ser != m.cov.ser {
				t.Fatalf("fast serialisation %q, httpsfv %q (%v)", m.cov.ser, ser, err)
			}
		}
	}
	if fast, ok := fastBytesDict(sg); ok {
		d, err := httpsfv.UnmarshalDictionary(sg)
		if err != nil {
			t.Fatalf("fast path took %q, httpsfv refuses it: %v", sg, err)
		}
		slow := slowBytesDict(d)
		if fmt.Sprint(fast) != fmt.Sprint(slow) {
			t.Fatalf("fast path differs on %q: %v, httpsfv %v", sg, fast, slow)
		}
	}
	h := http.Header{"Signature-Input": in, "Signature": sg}
	fs, ferr := parseRFC9421Signatures(h, true)
	ss, serr := parseRFC9421Signatures(h, false)
	if fmt.Sprint(ferr) != fmt.Sprint(serr) {
		t.Fatalf("errors differ on %q / %q: fast %v, slow %v", in, sg, ferr, serr)
	}
	if got, want := describeSigs(t, fs), describeSigs(t, ss); got != want {
		t.Fatalf("results differ on %q / %q:\n fast %s\n slow %s", in, sg, got, want)
	}
}

func checkFastDigest(t *testing.T, lines []string, body []byte) {
	t.Helper()
	fv, ferr := ParseContentDigest(lines)
	var sv []DigestValue
	var serr error
	if n := linesLen(lines); n == 0 || n > maxDigestHeader {
		serr = fmt.Errorf("%w: Content-Digest of %d bytes", ErrMalformed, n)
	} else {
		sv, serr = slowContentDigest(lines)
	}
	if fmt.Sprint(ferr) != fmt.Sprint(serr) || fmt.Sprint(fv) != fmt.Sprint(sv) {
		t.Fatalf("ParseContentDigest(%q) = %v, %v; httpsfv %v, %v", lines, fv, ferr, sv, serr)
	}
	want := serr
	if want == nil {
		want = checkDigests(sv, body)
	}
	if got := VerifyContentDigest(lines, body); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("VerifyContentDigest(%q) = %v, httpsfv path %v", lines, got, want)
	}
}

func describeInput(t *testing.T, ms []sigInputMember) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "%s bad=%v nonString=%v params=%+v comps=[", m.label, m.bad, m.nonString, m.sp)
		for _, c := range m.cov.comps {
			id := c.id
			if id == "" {
				var err error
				if id, err = marshalItem(httpsfv.Item{Value: c.name, Params: c.params}); err != nil {
					id = "!" + err.Error()
				}
			}
			fmt.Fprintf(&b, "%q %q %s|", c.name, id, paramsText(c.params))
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func paramsText(p *httpsfv.Params) string {
	var b strings.Builder
	for _, k := range paramNames(p) {
		v, _ := p.Get(k)
		fmt.Fprintf(&b, ";%s=%T:%v", k, v, v)
	}
	return b.String()
}

func describeSigs(t *testing.T, ss []*RFC9421Signature) string {
	var b strings.Builder
	for _, s := range ss {
		ser, err := s.cov.serialized()
		fmt.Fprintf(&b, "%s %q %q %q %q %d %d %x %q %q %v\n", s.Label, s.KeyID, s.Alg, s.Nonce, s.Tag,
			s.Created.Unix(), s.Expires.Unix(), s.Signature, s.Components(), ser, err)
		req, _ := http.NewRequest("POST", "https://example.com/foo?param=Value&Pet=dog", nil)
		req.Header.Set("Example-Dict", "a=1, b=2;x=1;y=2, c=(a b c), d")
		req.Header.Set("X", "x")
		base, _, err := signatureBase(requestMessage(req, ""), &s.cov)
		if !bytes.Contains(base, []byte(ser)) && err == nil {
			t.Fatalf("base %q lacks %q", base, ser)
		}
		fmt.Fprintf(&b, "%q %v\n", base, err)
	}
	return b.String()
}

var dateCases = []struct {
	name, in string
	fast     bool
}{
	{"imf-fixdate", "Tue, 20 Apr 2021 02:07:55 GMT", true},
	{"leap day", "Thu, 29 Feb 2024 23:59:59 GMT", true},
	{"other weekday", "Mon, 20 Apr 2021 02:07:55 GMT", false},
	{"lower case", "tue, 20 apr 2021 02:07:55 GMT", false},
	{"february 30", "Thu, 30 Feb 2024 00:00:00 GMT", false},
	{"hour 24", "Tue, 20 Apr 2021 24:00:00 GMT", false},
	{"second 60", "Tue, 20 Apr 2021 23:59:60 GMT", false},
	{"rfc 850", "Tuesday, 20-Apr-21 02:07:55 GMT", false},
	{"asctime", "Tue Apr 20 02:07:55 2021", false},
	{"other zone", "Tue, 20 Apr 2021 02:07:55 UTC", false},
	{"empty", "", false},
}

func TestParseHTTPDateMatchesNetHTTP(t *testing.T) {
	for _, c := range dateCases {
		t.Run(c.name, func(t *testing.T) {
			if _, ok := parseIMFFixdate(c.in); ok != c.fast {
				t.Errorf("fast path took it: %v, want %v", ok, c.fast)
			}
			checkHTTPDate(t, c.in)
		})
	}
}

func FuzzParseHTTPDate(f *testing.F) {
	for _, c := range dateCases {
		f.Add(c.in)
	}
	f.Fuzz(checkHTTPDate)
}

func checkHTTPDate(t *testing.T, in string) {
	got, err := parseHTTPDate(in)
	want, werr := http.ParseTime(in)
	// Zones parsed from text are fresh Locations, so compare their names.
	if (err == nil) != (werr == nil) || !got.Equal(want) || got.Location().String() != want.Location().String() {
		t.Fatalf("parseHTTPDate(%q) = %v, %v; http.ParseTime %v, %v", in, got, err, want, werr)
	}
}
