package sig_test

import (
	"crypto"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/sig"
)

// RFC 9421 Appendix B.1 keys. test-key-rsa-pss's private key is PKCS#8
// with the id-RSASSA-PSS OID, which crypto/x509 does not parse and
// ParsePrivateKeyPEM does.
const (
	rfcKeyRSAPublic = `-----BEGIN RSA PUBLIC KEY-----
MIIBCgKCAQEAhAKYdtoeoy8zcAcR874L8cnZxKzAGwd7v36APp7Pv6Q2jdsPBRrw
WEBnez6d0UDKDwGbc6nxfEXAy5mbhgajzrw3MOEt8uA5txSKobBpKDeBLOsdJKFq
MGmXCQvEG7YemcxDTRPxAleIAgYYRjTSd/QBwVW9OwNFhekro3RtlinV0a75jfZg
kne/YiktSvLG34lw2zqXBDTC5NHROUqGTlML4PlNZS5Ri2U4aCNx2rUPRcKIlE0P
uKxI4T+HIaFpv8+rdV6eUgOrB2xeI1dSFFn/nnv5OoZJEIB+VmuKn3DCUcCZSFlQ
PSXSfBDiUGhwOw76WuSSsf1D4b/vLoJ10wIDAQAB
-----END RSA PUBLIC KEY-----`
	rfcKeyRSAPrivate = `-----BEGIN RSA PRIVATE KEY-----
MIIEqAIBAAKCAQEAhAKYdtoeoy8zcAcR874L8cnZxKzAGwd7v36APp7Pv6Q2jdsP
BRrwWEBnez6d0UDKDwGbc6nxfEXAy5mbhgajzrw3MOEt8uA5txSKobBpKDeBLOsd
JKFqMGmXCQvEG7YemcxDTRPxAleIAgYYRjTSd/QBwVW9OwNFhekro3RtlinV0a75
jfZgkne/YiktSvLG34lw2zqXBDTC5NHROUqGTlML4PlNZS5Ri2U4aCNx2rUPRcKI
lE0PuKxI4T+HIaFpv8+rdV6eUgOrB2xeI1dSFFn/nnv5OoZJEIB+VmuKn3DCUcCZ
SFlQPSXSfBDiUGhwOw76WuSSsf1D4b/vLoJ10wIDAQABAoIBAG/JZuSWdoVHbi56
vjgCgkjg3lkO1KrO3nrdm6nrgA9P9qaPjxuKoWaKO1cBQlE1pSWp/cKncYgD5WxE
CpAnRUXG2pG4zdkzCYzAh1i+c34L6oZoHsirK6oNcEnHveydfzJL5934egm6p8DW
+m1RQ70yUt4uRc0YSor+q1LGJvGQHReF0WmJBZHrhz5e63Pq7lE0gIwuBqL8SMaA
yRXtK+JGxZpImTq+NHvEWWCu09SCq0r838ceQI55SvzmTkwqtC+8AT2zFviMZkKR
Qo6SPsrqItxZWRty2izawTF0Bf5S2VAx7O+6t3wBsQ1sLptoSgX3QblELY5asI0J
YFz7LJECgYkAsqeUJmqXE3LP8tYoIjMIAKiTm9o6psPlc8CrLI9CH0UbuaA2JCOM
cCNq8SyYbTqgnWlB9ZfcAm/cFpA8tYci9m5vYK8HNxQr+8FS3Qo8N9RJ8d0U5Csw
DzMYfRghAfUGwmlWj5hp1pQzAuhwbOXFtxKHVsMPhz1IBtF9Y8jvgqgYHLbmyiu1
mwJ5AL0pYF0G7x81prlARURwHo0Yf52kEw1dxpx+JXER7hQRWQki5/NsUEtv+8RT
qn2m6qte5DXLyn83b1qRscSdnCCwKtKWUug5q2ZbwVOCJCtmRwmnP131lWRYfj67
B/xJ1ZA6X3GEf4sNReNAtaucPEelgR2nsN0gKQKBiGoqHWbK1qYvBxX2X3kbPDkv
9C+celgZd2PW7aGYLCHq7nPbmfDV0yHcWjOhXZ8jRMjmANVR/eLQ2EfsRLdW69bn
f3ZD7JS1fwGnO3exGmHO3HZG+6AvberKYVYNHahNFEw5TsAcQWDLRpkGybBcxqZo
81YCqlqidwfeO5YtlO7etx1xLyqa2NsCeG9A86UjG+aeNnXEIDk1PDK+EuiThIUa
/2IxKzJKWl1BKr2d4xAfR0ZnEYuRrbeDQYgTImOlfW6/GuYIxKYgEKCFHFqJATAG
IxHrq1PDOiSwXd2GmVVYyEmhZnbcp8CxaEMQoevxAta0ssMK3w6UsDtvUvYvF22m
qQKBiD5GwESzsFPy3Ga0MvZpn3D6EJQLgsnrtUPZx+z2Ep2x0xc5orneB5fGyF1P
WtP+fG5Q6Dpdz3LRfm+KwBCWFKQjg7uTxcjerhBWEYPmEMKYwTJF5PBG9/ddvHLQ
EQeNC8fHGg4UXU8mhHnSBt3EA10qQJfRDs15M38eG2cYwB1PZpDHScDnDA0=
-----END RSA PRIVATE KEY-----`
	rfcKeyRSAPSSPublic = `-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAr4tmm3r20Wd/PbqvP1s2
+QEtvpuRaV8Yq40gjUR8y2Rjxa6dpG2GXHbPfvMs8ct+Lh1GH45x28Rw3Ry53mm+
oAXjyQ86OnDkZ5N8lYbggD4O3w6M6pAvLkhk95AndTrifbIFPNU8PPMO7OyrFAHq
gDsznjPFmTOtCEcN2Z1FpWgchwuYLPL+Wokqltd11nqqzi+bJ9cvSKADYdUAAN5W
Utzdpiy6LbTgSxP7ociU4Tn0g5I6aDZJ7A8Lzo0KSyZYoA485mqcO0GVAdVw9lq4
aOT9v6d+nb4bnNkQVklLQ3fVAvJm+xdDOp9LCNCN48V2pnDOkFV6+U9nV5oyc6XI
2wIDAQAB
-----END PUBLIC KEY-----`
	rfcKeyRSAPSSPrivate = `-----BEGIN PRIVATE KEY-----
MIIEvgIBADALBgkqhkiG9w0BAQoEggSqMIIEpgIBAAKCAQEAr4tmm3r20Wd/Pbqv
P1s2+QEtvpuRaV8Yq40gjUR8y2Rjxa6dpG2GXHbPfvMs8ct+Lh1GH45x28Rw3Ry5
3mm+oAXjyQ86OnDkZ5N8lYbggD4O3w6M6pAvLkhk95AndTrifbIFPNU8PPMO7Oyr
FAHqgDsznjPFmTOtCEcN2Z1FpWgchwuYLPL+Wokqltd11nqqzi+bJ9cvSKADYdUA
AN5WUtzdpiy6LbTgSxP7ociU4Tn0g5I6aDZJ7A8Lzo0KSyZYoA485mqcO0GVAdVw
9lq4aOT9v6d+nb4bnNkQVklLQ3fVAvJm+xdDOp9LCNCN48V2pnDOkFV6+U9nV5oy
c6XI2wIDAQABAoIBAQCUB8ip+kJiiZVKF8AqfB/aUP0jTAqOQewK1kKJ/iQCXBCq
pbo360gvdt05H5VZ/RDVkEgO2k73VSsbulqezKs8RFs2tEmU+JgTI9MeQJPWcP6X
aKy6LIYs0E2cWgp8GADgoBs8llBq0UhX0KffglIeek3n7Z6Gt4YFge2TAcW2WbN4
XfK7lupFyo6HHyWRiYHMMARQXLJeOSdTn5aMBP0PO4bQyk5ORxTUSeOciPJUFktQ
HkvGbym7KryEfwH8Tks0L7WhzyP60PL3xS9FNOJi9m+zztwYIXGDQuKM2GDsITeD
2mI2oHoPMyAD0wdI7BwSVW18p1h+jgfc4dlexKYRAoGBAOVfuiEiOchGghV5vn5N
RDNscAFnpHj1QgMr6/UG05RTgmcLfVsI1I4bSkbrIuVKviGGf7atlkROALOG/xRx
DLadgBEeNyHL5lz6ihQaFJLVQ0u3U4SB67J0YtVO3R6lXcIjBDHuY8SjYJ7Ci6Z6
vuDcoaEujnlrtUhaMxvSfcUJAoGBAMPsCHXte1uWNAqYad2WdLjPDlKtQJK1diCm
rqmB2g8QE99hDOHItjDBEdpyFBKOIP+NpVtM2KLhRajjcL9Ph8jrID6XUqikQuVi
4J9FV2m42jXMuioTT13idAILanYg8D3idvy/3isDVkON0X3UAVKrgMEne0hJpkPL
FYqgetvDAoGBAKLQ6JZMbSe0pPIJkSamQhsehgL5Rs51iX4m1z7+sYFAJfhvN3Q/
OGIHDRp6HjMUcxHpHw7U+S1TETxePwKLnLKj6hw8jnX2/nZRgWHzgVcY+sPsReRx
NJVf+Cfh6yOtznfX00p+JWOXdSY8glSSHJwRAMog+hFGW1AYdt7w80XBAoGBAImR
NUugqapgaEA8TrFxkJmngXYaAqpA0iYRA7kv3S4QavPBUGtFJHBNULzitydkNtVZ
3w6hgce0h9YThTo/nKc+OZDZbgfN9s7cQ75x0PQCAO4fx2P91Q+mDzDUVTeG30mE
t2m3S0dGe47JiJxifV9P3wNBNrZGSIF3mrORBVNDAoGBAI0QKn2Iv7Sgo4T/XjND
dl2kZTXqGAk8dOhpUiw/HdM3OGWbhHj2NdCzBliOmPyQtAr770GITWvbAI+IRYyF
S7Fnk6ZVVVHsxjtaHy1uJGFlaZzKR4AGNaUTOJMs6NadzCmGPAxNQQOCqoUjn4XR
rOjr9w349JooGXhOxbu8nOxX
-----END PRIVATE KEY-----`
	rfcKeyECCPublic = `-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEqIVYZVLCrPZHGHjP17CTW0/+D9Lf
w0EkjqF7xB4FivAxzic30tMM4GF+hR6Dxh71Z50VGGdldkkDXZCnTNnoXQ==
-----END PUBLIC KEY-----`
	rfcKeyECCPrivate = `-----BEGIN EC PRIVATE KEY-----
MHcCAQEEIFKbhfNZfpDsW43+0+JjUr9K+bTeuxopu653+hBaXGA7oAoGCCqGSM49
AwEHoUQDQgAEqIVYZVLCrPZHGHjP17CTW0/+D9Lfw0EkjqF7xB4FivAxzic30tMM
4GF+hR6Dxh71Z50VGGdldkkDXZCnTNnoXQ==
-----END EC PRIVATE KEY-----`
	rfcKeyEd25519Public = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=
-----END PUBLIC KEY-----`
	rfcKeyEd25519Private = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF
-----END PRIVATE KEY-----`
	rfcSharedSecret = `uzvJfB4u3N0Jy4T7NZ75MDVcr8zSTInedJtkgcu46YW4XByzNJjxBdtjUkdJPBt\
  bmHhIDi6pcl8jsasjlTMtDQ==`

	rfcRequestDigest  = "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"
	rfcResponseDigest = "sha-512=:mEWXIS7MaLRuGgxOBdODa3xqM1XdEvxoYhvlCFJ41QJgJc4GTsPp29l5oGX69wWdXymyU0rjJuahq4l5aGgfLQ==:"
	rfcClientCert     = `:MIIBqDCCAU6gAwIBAgIBBzAKBggqhkjOPQQDAjA6MRswGQYDVQQKD\
  BJMZXQncyBBdXRoZW50aWNhdGUxGzAZBgNVBAMMEkxBIEludGVybWVkaWF0ZSBDQT\
  AeFw0yMDAxMTQyMjU1MzNaFw0yMTAxMjMyMjU1MzNaMA0xCzAJBgNVBAMMAkJDMFk\
  wEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE8YnXXfaUgmnMtOXU/IncWalRhebrXmck\
  C8vdgJ1p5Be5F/3YC8OthxM4+k1M6aEAEFcGzkJiNy6J84y7uzo9M6NyMHAwCQYDV\
  R0TBAIwADAfBgNVHSMEGDAWgBRm3WjLa38lbEYCuiCPct0ZaSED2DAOBgNVHQ8BAf\
  8EBAMCBsAwEwYDVR0lBAwwCgYIKwYBBQUHAwIwHQYDVR0RAQH/BBMwEYEPYmRjQGV\
  4YW1wbGUuY29tMAoGCCqGSM49BAMCA0gAMEUCIBHda/r1vaL6G3VliL4/Di6YK0Q6\
  bMjeSkC3dFCOOB8TAiEAx/kHSB4urmiZ0NX5r5XarmPk0wmuydBVoU4hBVZ1yhk=:`
)

var rfc8792 = regexp.MustCompile(`\\\n *`)

// unfold undoes RFC 8792 '\' line wrapping.
func unfold(s string) string { return rfc8792.ReplaceAllString(s, "") }

func mustPub(t *testing.T, pemText string) crypto.PublicKey {
	t.Helper()
	k, err := sig.ParsePublicKeyPEM([]byte(pemText))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustPriv(t *testing.T, pemText string) crypto.Signer {
	t.Helper()
	k, err := sig.ParsePrivateKeyPEM([]byte(pemText))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// rfcTestRequest is Appendix B.2's test-request.
func rfcTestRequest(t *testing.T) *http.Request {
	t.Helper()
	r, err := http.NewRequest("POST", "https://example.com/foo?param=Value&Pet=dog", strings.NewReader(`{"hello": "world"}`))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Date", "Tue, 20 Apr 2021 02:07:55 GMT")
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Content-Digest", rfcRequestDigest)
	r.Header.Set("Content-Length", "18")
	return r
}

// rfcTestResponse is Appendix B.2's test-response.
func rfcTestResponse() *http.Response {
	h := http.Header{}
	h.Set("Date", "Tue, 20 Apr 2021 02:07:56 GMT")
	h.Set("Content-Type", "application/json")
	h.Set("Content-Digest", rfcResponseDigest)
	h.Set("Content-Length", "23")
	return &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(strings.NewReader(`{"message": "good dog"}`))}
}

func only(t *testing.T, h http.Header) *sig.RFC9421Signature {
	t.Helper()
	s, err := sig.ParseRFC9421Signatures(h)
	if err != nil || len(s) != 1 {
		t.Fatalf("ParseRFC9421Signatures: %v (%d)", err, len(s))
	}
	return s[0]
}

// TestRFC9421AppendixB verifies every Appendix B example, checks each
// signature base against the RFC's text, and reproduces the deterministic
// ones (hmac-sha256, ed25519) byte for byte.
func TestRFC9421AppendixB(t *testing.T) {
	t.Parallel()
	hmacKey, err := base64.StdEncoding.DecodeString(unfold(rfcSharedSecret))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		msg        func(t *testing.T) (req *http.Request, resp *http.Response)
		input, sig string
		base       string
		pub        any
		alg        string
		sign       any // key to reproduce the signature with, when deterministic
		components []string
	}{
		{
			name:  "B.2.1 minimal rsa-pss-sha512",
			msg:   func(t *testing.T) (*http.Request, *http.Response) { return rfcTestRequest(t), nil },
			input: `sig-b21=();created=1618884473;keyid="test-key-rsa-pss";nonce="b3k2pp5k7z-50gnwp.yemd"`,
			sig: `sig-b21=:d2pmTvmbncD3xQm8E9ZV2828BjQWGgiwAaw5bAkgibUopem\
  LJcWDy/lkbbHAve4cRAtx31Iq786U7it++wgGxbtRxf8Udx7zFZsckzXaJMkA7ChG\
  52eSkFxykJeNqsrWH5S+oxNFlD4dzVuwe8DhTSja8xxbR/Z2cOGdCbzR72rgFWhzx\
  2VjBqJzsPLMIQKhO4DGezXehhWwE56YCE+O6c0mKZsfxVrogUvA4HELjVKWmAvtl6\
  UnCh8jYzuVG5WSb/QEVPnP5TmcAnLH1g+s++v6d4s8m0gCw1fV5/SITLq9mhho8K3\
  +7EPYTU8IU1bLhdxO5Nyt8C8ssinQ98Xw9Q==:`,
			base: `"@signature-params": ();created=1618884473;keyid="test-key-rsa-pss"\
  ;nonce="b3k2pp5k7z-50gnwp.yemd"`,
			pub: mustPub(t, rfcKeyRSAPSSPublic), alg: sig.AlgRSAPSSSHA512,
		},
		{
			name: "B.2.2 selective rsa-pss-sha512",
			msg:  func(t *testing.T) (*http.Request, *http.Response) { return rfcTestRequest(t), nil },
			input: `sig-b22=("@authority" "content-digest" \
  "@query-param";name="Pet");created=1618884473\
  ;keyid="test-key-rsa-pss";tag="header-example"`,
			sig: `sig-b22=:LjbtqUbfmvjj5C5kr1Ugj4PmLYvx9wVjZvD9GsTT4F7GrcQ\
  EdJzgI9qHxICagShLRiLMlAJjtq6N4CDfKtjvuJyE5qH7KT8UCMkSowOB4+ECxCmT\
  8rtAmj/0PIXxi0A0nxKyB09RNrCQibbUjsLS/2YyFYXEu4TRJQzRw1rLEuEfY17SA\
  RYhpTlaqwZVtR8NV7+4UKkjqpcAoFqWFQh62s7Cl+H2fjBSpqfZUJcsIk4N6wiKYd\
  4je2U/lankenQ99PZfB4jY3I5rSV2DSBVkSFsURIjYErOs0tFTQosMTAoxk//0RoK\
  UqiYY8Bh0aaUEb0rQl3/XaVe4bXTugEjHSw==:`,
			base: `"@authority": example.com
"content-digest": sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX\
  +TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:
"@query-param";name="Pet": dog
"@signature-params": ("@authority" "content-digest" \
  "@query-param";name="Pet")\
  ;created=1618884473;keyid="test-key-rsa-pss"\
  ;tag="header-example"`,
			pub: mustPub(t, rfcKeyRSAPSSPublic), alg: sig.AlgRSAPSSSHA512,
		},
		{
			name: "B.2.3 full coverage rsa-pss-sha512",
			msg:  func(t *testing.T) (*http.Request, *http.Response) { return rfcTestRequest(t), nil },
			input: `sig-b23=("date" "@method" "@path" "@query" \
  "@authority" "content-type" "content-digest" "content-length")\
  ;created=1618884473;keyid="test-key-rsa-pss"`,
			sig: `sig-b23=:bbN8oArOxYoyylQQUU6QYwrTuaxLwjAC9fbY2F6SVWvh0yB\
  iMIRGOnMYwZ/5MR6fb0Kh1rIRASVxFkeGt683+qRpRRU5p2voTp768ZrCUb38K0fU\
  xN0O0iC59DzYx8DFll5GmydPxSmme9v6ULbMFkl+V5B1TP/yPViV7KsLNmvKiLJH1\
  pFkh/aYA2HXXZzNBXmIkoQoLd7YfW91kE9o/CCoC1xMy7JA1ipwvKvfrs65ldmlu9\
  bpG6A9BmzhuzF8Eim5f8ui9eH8LZH896+QIF61ka39VBrohr9iyMUJpvRX2Zbhl5Z\
  JzSRxpJyoEZAFL2FUo5fTIztsDZKEgM4cUA==:`,
			base: `"date": Tue, 20 Apr 2021 02:07:55 GMT
"@method": POST
"@path": /foo
"@query": ?param=Value&Pet=dog
"@authority": example.com
"content-type": application/json
"content-digest": sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX\
  +TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:
"content-length": 18
"@signature-params": ("date" "@method" "@path" "@query" \
  "@authority" "content-type" "content-digest" "content-length")\
  ;created=1618884473;keyid="test-key-rsa-pss"`,
			pub: mustPub(t, rfcKeyRSAPSSPublic), alg: sig.AlgRSAPSSSHA512,
		},
		{
			name: "B.2.4 response ecdsa-p256-sha256",
			msg:  func(t *testing.T) (*http.Request, *http.Response) { return nil, rfcTestResponse() },
			input: `sig-b24=("@status" "content-type" \
  "content-digest" "content-length");created=1618884473\
  ;keyid="test-key-ecc-p256"`,
			sig: `sig-b24=:wNmSUAhwb5LxtOtOpNa6W5xj067m5hFrj0XQ4fvpaCLx0NK\
  ocgPquLgyahnzDnDAUy5eCdlYUEkLIj+32oiasw==:`,
			base: `"@status": 200
"content-type": application/json
"content-digest": sha-512=:mEWXIS7MaLRuGgxOBdODa3xqM1XdEvxoYhvlCFJ4\
  1QJgJc4GTsPp29l5oGX69wWdXymyU0rjJuahq4l5aGgfLQ==:
"content-length": 23
"@signature-params": ("@status" "content-type" "content-digest" \
  "content-length");created=1618884473;keyid="test-key-ecc-p256"`,
			pub: mustPub(t, rfcKeyECCPublic), alg: sig.AlgECDSAP256SHA256,
		},
		{
			name:  "B.2.5 hmac-sha256",
			msg:   func(t *testing.T) (*http.Request, *http.Response) { return rfcTestRequest(t), nil },
			input: `sig-b25=("date" "@authority" "content-type");created=1618884473;keyid="test-shared-secret"`,
			sig:   `sig-b25=:pxcQw6G3AjtMBQjwo8XzkZf/bws5LelbaMk5rGIGtE8=:`,
			base: `"date": Tue, 20 Apr 2021 02:07:55 GMT
"@authority": example.com
"content-type": application/json
"@signature-params": ("date" "@authority" "content-type")\
  ;created=1618884473;keyid="test-shared-secret"`,
			pub: hmacKey, alg: sig.AlgHMACSHA256, sign: hmacKey,
			components: []string{"date", "@authority", "content-type"},
		},
		{
			name: "B.2.6 ed25519",
			msg:  func(t *testing.T) (*http.Request, *http.Response) { return rfcTestRequest(t), nil },
			input: `sig-b26=("date" "@method" "@path" "@authority" \
  "content-type" "content-length");created=1618884473\
  ;keyid="test-key-ed25519"`,
			sig: `sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1\
  u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:`,
			base: `"date": Tue, 20 Apr 2021 02:07:55 GMT
"@method": POST
"@path": /foo
"@authority": example.com
"content-type": application/json
"content-length": 18
"@signature-params": ("date" "@method" "@path" "@authority" \
  "content-type" "content-length");created=1618884473\
  ;keyid="test-key-ed25519"`,
			pub: mustPub(t, rfcKeyEd25519Public), alg: sig.AlgEd25519, sign: mustPriv(t, rfcKeyEd25519Private),
			components: []string{"date", "@method", "@path", "@authority", "content-type", "content-length"},
		},
		{
			name: "B.3 TLS-terminating proxy",
			msg: func(t *testing.T) (*http.Request, *http.Response) {
				r := rfcTestRequest(t)
				r.Host = "service.internal.example"
				r.Header.Del("Content-Digest")
				r.Header.Set("Client-Cert", unfold(rfcClientCert))
				return r, nil
			},
			input: `ttrp=("@path" "@query" "@method" "@authority" \
  "client-cert");created=1618884473;keyid="test-key-ecc-p256"`,
			sig: `ttrp=:xVMHVpawaAC/0SbHrKRs9i8I3eOs5RtTMGCWXm/9nvZzoHsIg6\
  Mce9315T6xoklyy0yzhD9ah4JHRwMLOgmizw==:`,
			pub: mustPub(t, rfcKeyECCPublic), alg: sig.AlgECDSAP256SHA256,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, resp := tc.msg(t)
			var h http.Header
			if req != nil {
				h = req.Header
			} else {
				h = resp.Header
			}
			h.Set("Signature-Input", unfold(tc.input))
			h.Set("Signature", unfold(tc.sig))
			s := only(t, h)
			verify := func(s *sig.RFC9421Signature) error {
				if req != nil {
					return sig.VerifyRFC9421(req, s, tc.pub, tc.alg)
				}
				return sig.VerifyRFC9421Response(resp, s, tc.pub, tc.alg)
			}
			if err := verify(s); err != nil {
				t.Fatalf("verify: %v", err)
			}
			if tc.alg == sig.AlgRSAPSSSHA512 {
				// And with the public half of the B.1.2 private key as
				// ParsePrivateKeyPEM reads it (PKCS#8, id-RSASSA-PSS).
				if err := sig.VerifyRFC9421(req, s, mustPriv(t, rfcKeyRSAPSSPrivate).Public(), tc.alg); err != nil {
					t.Fatalf("verify with the parsed private key: %v", err)
				}
			}
			if tc.base != "" && req != nil {
				req, _ := tc.msg(t)
				got, _, err := sig.RFC9421SignatureBase(req, &sig.SignOpts{Components: componentsOf(s), KeyID: s.KeyID, Nonce: s.Nonce, Tag: s.Tag,
					Created: s.Created, ParamOrder: []string{"created", "keyid", "nonce", "tag"}})
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != unfold(tc.base) {
					t.Fatalf("base\n%s\nwant\n%s", got, unfold(tc.base))
				}
			}
			if tc.sign != nil {
				req, _ := tc.msg(t)
				err := sig.SignRFC9421(req, tc.sign, &sig.SignOpts{Label: s.Label, Components: tc.components, KeyID: s.KeyID,
					Created: s.Created, Alg: tc.alg, OmitAlg: true, ParamOrder: []string{"created", "keyid"}})
				if err != nil {
					t.Fatal(err)
				}
				if got := req.Header.Get("Signature"); got != unfold(tc.sig) {
					t.Errorf("Signature\n got %s\nwant %s", got, unfold(tc.sig))
				}
				if got := req.Header.Get("Signature-Input"); got != unfold(tc.input) {
					t.Errorf("Signature-Input\n got %s\nwant %s", got, unfold(tc.input))
				}
			}
			if len(s.Components()) == 0 {
				return // covers nothing, so any message verifies
			}
			// The same signature must fail over a changed message.
			h.Set("Date", "Wed, 21 Apr 2021 02:07:55 GMT")
			h.Set("Content-Type", "text/plain")
			if req != nil {
				req.Host = "evil.example"
			} else {
				resp.StatusCode = 201
			}
			if err := verify(s); !errors.Is(err, sig.ErrBadSignature) {
				t.Fatalf("changed message: %v", err)
			}
		})
	}
}

// componentsOf returns a parsed signature's components in SignOpts form.
func componentsOf(s *sig.RFC9421Signature) []string { return s.Components() }

// TestRFC9421Section24RequestResponse verifies the RFC's only published
// signature over ;req components: a 503 response bound to test-request.
func TestRFC9421Section24RequestResponse(t *testing.T) {
	t.Parallel()
	req := rfcTestRequest(t)
	body := `{"busy": true, "message": "Your call is very important to us"}`
	resp := &http.Response{StatusCode: 503, Header: http.Header{}, Request: req, Body: io.NopCloser(strings.NewReader(body))}
	resp.Header.Set("Date", "Tue, 20 Apr 2021 02:07:56 GMT")
	resp.Header.Set("Content-Type", "application/json")
	resp.Header.Set("Content-Length", "62")
	resp.Header.Set("Content-Digest", sig.ContentDigest([]byte(body), sig.DigestSHA512))
	resp.Header.Set("Signature-Input", `reqres=("@status" "content-digest" "content-type" "@authority";req "@method";req "@path";req "content-digest";req);created=1618884479;keyid="test-key-ecc-p256"`)
	resp.Header.Set("Signature", `reqres=:dMT/A/76ehrdBTD/2Xx8QuKV6FoyzEP/I9hdzKN8LQJLNgzU4W767HK05rx1i8meNQQgQPgQp8wq2ive3tV5Ag==:`)
	pub := mustPub(t, rfcKeyECCPublic)
	s := only(t, resp.Header)
	if err := sig.VerifyRFC9421Response(resp, s, pub, ""); err != nil {
		t.Fatalf("verify: %v", err)
	}
	req.Header.Set("Content-Digest", resp.Header.Get("Content-Digest"))
	if err := sig.VerifyRFC9421Response(resp, s, pub, ""); !errors.Is(err, sig.ErrBadSignature) {
		t.Fatalf("other request: %v", err)
	}
	resp.Request = nil
	if err := sig.VerifyRFC9421Response(resp, s, pub, ""); !errors.Is(err, sig.ErrMissingComponent) {
		t.Fatalf("no request: %v", err)
	}
	// Our own signer and verifier agree on a ;req signature.
	priv := mustPriv(t, rfcKeyECCPrivate)
	resp.Request = rfcTestRequest(t)
	resp.Header.Del("Signature-Input")
	resp.Header.Del("Signature")
	if err := sig.SignRFC9421Response(resp, priv, &sig.SignOpts{Label: "mine", Components: []string{"@status", "content-digest", "@method;req", "content-digest;req"}, Created: t0}); err != nil {
		t.Fatal(err)
	}
	if err := sig.VerifyRFC9421Response(resp, only(t, resp.Header), pub, ""); err != nil {
		t.Fatalf("own ;req signature: %v", err)
	}
}

// TestRFC9421AppendixB4Transformations checks which transformations of a
// signed message keep the signature valid.
func TestRFC9421AppendixB4Transformations(t *testing.T) {
	t.Parallel()
	pub := mustPub(t, rfcKeyEd25519Public)
	const input = `transform=("@method" "@path" "@authority" "accept");created=1618884473;keyid="test-key-ed25519"`
	const signature = `transform=:ZT1kooQsEHpZ0I1IjCqtQppOmIqlJPeo7DHR3SoMn0s5JZ1eRGS0A+vyYP9t/LXlh5QMFFQ6cpLt2m0pmj3NDA==:`
	cases := []struct {
		name, method, url string
		accept            []string
		valid             bool
	}{
		{"original", "GET", "https://example.org/demo?name1=Value1&Name2=value2", []string{"application/json", "*/*"}, true},
		{"query added", "GET", "https://example.org/demo?name1=Value1&Name2=value2&param=added", []string{"application/json", "*/*"}, true},
		{"accept collapsed", "GET", "https://example.org/demo?name1=Value1&Name2=value2", []string{"application/json, */*"}, true},
		{"method and authority changed", "POST", "https://example.com/demo?name1=Value1&Name2=value2", []string{"application/json", "*/*"}, false},
		{"accept lines reordered", "GET", "https://example.org/demo?name1=Value1&Name2=value2", []string{"*/*", "application/json"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, tc.url, nil)
			req.Header["Accept"] = tc.accept
			req.Header.Set("Signature-Input", input)
			req.Header.Set("Signature", signature)
			err := sig.VerifyRFC9421(req, only(t, req.Header), pub, "")
			if tc.valid && err != nil {
				t.Fatalf("verify: %v", err)
			}
			if !tc.valid && !errors.Is(err, sig.ErrBadSignature) {
				t.Fatalf("verify = %v, want ErrBadSignature", err)
			}
		})
	}
}

// TestRFC9421ComponentValues checks component derivation against the
// examples of RFC 9421 sections 2.1 and 2.2.
func TestRFC9421ComponentValues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, url, component, want string
		header                     http.Header
		method                     string
		errIs                      error
	}{
		{name: "2.1.1 sf", component: `example-dict;sf`, want: `a=1, b=2;x=1;y=2, c=(a b c)`,
			header: http.Header{"Example-Dict": {"  a=1,    b=2;x=1;y=2,   c=(a   b   c)"}}},
		{name: "2.1 raw", component: `example-dict`, want: `a=1,    b=2;x=1;y=2,   c=(a   b   c)`,
			header: http.Header{"Example-Dict": {"  a=1,    b=2;x=1;y=2,   c=(a   b   c)"}}},
		{name: "2.1 multiple lines", component: `x-obs-fold-header`, want: `Obsolete line folding.`,
			header: http.Header{"X-Obs-Fold-Header": {"Obsolete\r\n    line folding."}}},
		{name: "2.1 empty", component: `x-empty-header`, want: ``, header: http.Header{"X-Empty-Header": {""}}},
		{name: "2.1 combined", component: `cache-control`, want: `max-age=60, must-revalidate`,
			header: http.Header{"Cache-Control": {"max-age=60", "   must-revalidate"}}},
		{name: "2.1.2 key a", component: `example-dict;key="a"`, want: `1`, header: http.Header{"Example-Dict": {" a=1, b=2;x=1;y=2, c=(a   b    c), d"}}},
		{name: "2.1.2 key d", component: `example-dict;key="d"`, want: `?1`, header: http.Header{"Example-Dict": {" a=1, b=2;x=1;y=2, c=(a   b    c), d"}}},
		{name: "2.1.2 key b", component: `example-dict;key="b"`, want: `2;x=1;y=2`, header: http.Header{"Example-Dict": {" a=1, b=2;x=1;y=2, c=(a   b    c), d"}}},
		{name: "2.1.2 key c", component: `example-dict;key="c"`, want: `(a b c)`, header: http.Header{"Example-Dict": {" a=1, b=2;x=1;y=2, c=(a   b    c), d"}}},
		{name: "2.1.2 key missing", component: `example-dict;key="z"`, header: http.Header{"Example-Dict": {"a=1"}}, errIs: sig.ErrMissingComponent},
		{name: "2.1.3 bs", component: `example-header;bs`, want: `:dmFsdWUsIHdpdGgsIGxvdHM=:, :b2YsIGNvbW1hcw==:`,
			header: http.Header{"Example-Header": {"value, with, lots", "of, commas"}}},
		{name: "2.1.3 bs one line", component: `example-header;bs`, want: `:dmFsdWUsIHdpdGgsIGxvdHMsIG9mLCBjb21tYXM=:`,
			header: http.Header{"Example-Header": {"value, with, lots, of, commas"}}},
		{name: "2.2.1 method", component: "@method", method: "POST", url: "http://example.com/path?param=value", want: "POST"},
		{name: "2.2.2 target-uri", component: "@target-uri", method: "POST", url: "https://www.example.com/path?param=value", want: "https://www.example.com/path?param=value"},
		{name: "2.2.3 authority", component: "@authority", url: "https://www.example.com/path?param=value", want: "www.example.com"},
		{name: "2.2.3 authority default port", component: "@authority", url: "https://WWW.Example.com:443/x", want: "www.example.com"},
		{name: "2.2.3 authority other port", component: "@authority", url: "https://www.example.com:8443/x", want: "www.example.com:8443"},
		{name: "2.2.4 scheme", component: "@scheme", url: "http://www.example.com/path?param=value", want: "http"},
		{name: "2.2.5 request-target", component: "@request-target", url: "https://www.example.com/path?param=value", want: "/path?param=value"},
		{name: "2.2.6 path", component: "@path", url: "https://www.example.com/path?param=value", want: "/path"},
		{name: "2.2.6 path empty", component: "@path", url: "https://www.example.com", want: "/"},
		{name: "2.2.7 query", component: "@query", url: "https://www.example.com/path?param=value&foo=bar&baz=bat%2Dman", want: "?param=value&foo=bar&baz=bat%2Dman"},
		{name: "2.2.7 query empty", component: "@query", url: "https://www.example.com/path", want: "?"},
		{name: "2.2.8 query-param baz", component: `@query-param;name="baz"`, url: "https://www.example.com/path?param=value&foo=bar&baz=batman&qux=", want: "batman"},
		{name: "2.2.8 query-param qux empty", component: `@query-param;name="qux"`, url: "https://www.example.com/path?param=value&foo=bar&baz=batman&qux=", want: ""},
		{name: "2.2.8 query-param var", component: `@query-param;name="var"`, url: "https://example.com/parameters?var=this%20is%20a%20big%0Avalue&bar=with+plus+whitespace&fa%C3%A7ade%22%3A%20=something", want: "this%20is%20a%20big%0Avalue"},
		{name: "2.2.8 query-param bar", component: `@query-param;name="bar"`, url: "https://example.com/parameters?var=this%20is%20a%20big%0Avalue&bar=with+plus+whitespace&fa%C3%A7ade%22%3A%20=something", want: "with%20plus%20whitespace"},
		{name: "2.2.8 query-param encoded name", component: `@query-param;name="fa%C3%A7ade%22%3A%20"`, url: "https://example.com/parameters?var=this%20is%20a%20big%0Avalue&bar=with+plus+whitespace&fa%C3%A7ade%22%3A%20=something", want: "something"},
		{name: "2.2.8 query-param repeated", component: `@query-param;name="a"`, url: "https://example.com/?a=1&a=2", errIs: sig.ErrMalformed},
		{name: "2.2.8 query-param absent", component: `@query-param;name="b"`, url: "https://example.com/?a=1", errIs: sig.ErrMissingComponent},
		{name: "field absent", component: "x-nothing", errIs: sig.ErrMissingComponent},
		{name: "trailer parameter unsupported", component: "example-header;tr", header: http.Header{"Example-Header": {"v"}}, errIs: sig.ErrMalformed},
		{name: "bs with sf refused", component: "example-header;bs;sf", header: http.Header{"Example-Header": {"v"}}, errIs: sig.ErrMalformed},
		{name: "status on request", component: "@status", errIs: sig.ErrMissingComponent},
		{name: "unknown derived", component: "@nope", errIs: sig.ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.url == "" {
				tc.url = "https://example.com/"
			}
			if tc.method == "" {
				tc.method = "GET"
			}
			req, err := http.NewRequest(tc.method, tc.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.header {
				req.Header[k] = v
			}
			base, _, err := sig.RFC9421SignatureBase(req, &sig.SignOpts{Components: []string{tc.component}})
			if tc.errIs != nil {
				if !errors.Is(err, tc.errIs) {
					t.Fatalf("err = %v, want %v", err, tc.errIs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			line, _, _ := strings.Cut(string(base), "\n")
			_, got, _ := strings.Cut(line, ": ")
			if !strings.Contains(line, ": ") {
				got = ""
			}
			if got != tc.want {
				t.Fatalf("%s = %q, want %q", tc.component, got, tc.want)
			}
		})
	}
}

// TestRFC9421RSAPSSKey uses test-key-rsa-pss's private key (B.1.2), which
// is PKCS#8 under the id-RSASSA-PSS OID.
func TestRFC9421RSAPSSKey(t *testing.T) {
	t.Parallel()
	priv := mustPriv(t, rfcKeyRSAPSSPrivate)
	pub := mustPub(t, rfcKeyRSAPSSPublic)
	sign := func(t *testing.T, alg string) *http.Request {
		t.Helper()
		req := rfcTestRequest(t)
		err := sig.SignRFC9421(req, priv, &sig.SignOpts{Label: "pss", Alg: alg, KeyID: "test-key-rsa-pss", Created: t0,
			Components: []string{"@method", "@authority", "@path", "content-digest", "content-type"}})
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	cases := []struct {
		name string
		run  func(t *testing.T) error
		want error
	}{
		{"B.1.2 private key matches its public key", func(t *testing.T) error {
			k, ok := priv.(*rsa.PrivateKey)
			if !ok || k.Validate() != nil || !k.PublicKey.Equal(pub) {
				return errors.New("the parsed key is not test-key-rsa-pss")
			}
			return nil
		}, nil},
		{"sign rsa-pss-sha512, verify with the RFC public key", func(t *testing.T) error {
			req := sign(t, sig.AlgRSAPSSSHA512)
			return sig.VerifyRFC9421(req, only(t, req.Header), pub, sig.AlgRSAPSSSHA512)
		}, nil},
		{"sign rsa-pss-sha512, verify with the parsed key's public half", func(t *testing.T) error {
			req := sign(t, sig.AlgRSAPSSSHA512)
			return sig.VerifyRFC9421(req, only(t, req.Header), priv.Public(), "")
		}, nil},
		{"rsa-pss-sha512 signature under a key pinned to rsa-v1_5-sha256", func(t *testing.T) error {
			req := sign(t, sig.AlgRSAPSSSHA512)
			return sig.VerifyRFC9421(req, only(t, req.Header), pub, sig.AlgRSAv15SHA256)
		}, sig.ErrUnsupportedAlgorithm},
		{"rsa-pss-sha512 signature over a changed message", func(t *testing.T) error {
			req := sign(t, sig.AlgRSAPSSSHA512)
			req.Header.Set("Content-Type", "text/plain")
			return sig.VerifyRFC9421(req, only(t, req.Header), pub, sig.AlgRSAPSSSHA512)
		}, sig.ErrBadSignature},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.run(t); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}
