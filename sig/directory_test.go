package sig_test

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/internal/fixture"
	"github.com/fedkit/fedkit/sig"
)

type dirVector struct {
	Method         string `json:"method"`
	Scheme         string `json:"scheme"`
	Authority      string `json:"authority"`
	Target         string `json:"target"`
	ContentType    string `json:"content_type"`
	ContentDigest  string `json:"content_digest"`
	Date           string `json:"date"`
	Body           string `json:"body"`
	SignatureInput string `json:"signature_input"`
	Signature      string `json:"signature"`
	KeyID          string `json:"key_id"`
	KeyOwner       string `json:"key_owner"`
	PublicKeyPEM   string `json:"public_key_pem"`
}

func loadDirVector(t *testing.T, rel string) dirVector {
	t.Helper()
	var v dirVector
	// key_actor is not needed here, so the decode is not strict.
	if err := json.Unmarshal(fixture.Shared(t, rel), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func (v dirVector) request(t *testing.T) *http.Request {
	t.Helper()
	req, err := http.NewRequest(v.Method, v.Scheme+"://"+v.Authority+v.Target, strings.NewReader(v.Body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", v.ContentType)
	req.Header.Set("Content-Digest", v.ContentDigest)
	req.Header.Set("Date", v.Date)
	return req
}

var dirVectors = []struct {
	name, rel   string
	tag, nonce  string
	reproduce   bool
	lifetimeSec int64
}{
	{"v1/rfc9421-register", "directory/v1/rfc9421-register.valid.json", "activity-relay-directory-v1", "directory-fixture-nonce-20260804", false, 180},
	{"v1/activity-relay-register", "directory/v1/activity-relay-register.valid.json", "activity-relay-directory-v1", "fixture-nonce-0001", true, 300},
	{"v2/activity-relay-register", "directory/v2/activity-relay-register.valid.json", "activity-relay-directory-v2", "fixture-v2-nonce-0001", true, 300},
	{"v3/activity-relay-register", "directory/v3/activity-relay-register.valid.json", "activity-relay-directory-v3", "fixture-v3-nonce-0001", true, 300},
}

// TestDirectoryVectorsVerify checks all four signed Directory vectors from
// their own fields, through the code under test, and the digest and the
// base independently built here.
func TestDirectoryVectorsVerify(t *testing.T) {
	for _, tc := range dirVectors {
		t.Run(tc.name, func(t *testing.T) {
			v := loadDirVector(t, tc.rel)
			if got := sig.ContentDigest([]byte(v.Body)); got != v.ContentDigest {
				t.Fatalf("ContentDigest = %q, want %q", got, v.ContentDigest)
			}
			pub, err := sig.ParsePublicKeyPEM([]byte(v.PublicKeyPEM))
			if err != nil {
				t.Fatal(err)
			}
			req := v.request(t)
			req.Header.Set("Signature-Input", v.SignatureInput)
			req.Header.Set("Signature", v.Signature)
			sigs, err := sig.ParseRFC9421Signatures(req.Header)
			if err != nil {
				t.Fatal(err)
			}
			if len(sigs) != 1 || sigs[0].Label != "directory" || sigs[0].Tag != tc.tag || sigs[0].Nonce != tc.nonce {
				t.Fatalf("parsed %+v", sigs[0])
			}
			if d := sigs[0].Expires.Unix() - sigs[0].Created.Unix(); d != tc.lifetimeSec {
				t.Errorf("lifetime %d, want %d", d, tc.lifetimeSec)
			}
			if err := sig.VerifyRFC9421(req, sigs[0], pub, ""); err != nil {
				t.Fatalf("VerifyRFC9421: %v", err)
			}

			// Independent base, built by hand as in directory-protocol.md 11.3.
			params := strings.TrimPrefix(v.SignatureInput, "directory=")
			base := `"@method": ` + v.Method + "\n" +
				`"@authority": ` + v.Authority + "\n" +
				`"@target-uri": ` + v.Scheme + "://" + v.Authority + v.Target + "\n" +
				`"content-digest": ` + v.ContentDigest + "\n" +
				`"content-type": ` + v.ContentType + "\n" +
				`"date": ` + v.Date + "\n" +
				`"@signature-params": ` + params
			got, _, err := sig.RFC9421SignatureBase(req, &sig.SignOpts{Components: []string{"@method", "@authority", "@target-uri", "content-digest", "content-type", "date"},
				KeyID: sigs[0].KeyID, Alg: sigs[0].Alg, Tag: sigs[0].Tag, Nonce: sigs[0].Nonce, Created: sigs[0].Created, Expires: sigs[0].Expires})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != base {
				t.Fatalf("base mismatch:\n%s\nwant\n%s", got, base)
			}
			rawSig, _ := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(v.Signature, "directory=:"), ":"))
			h := sha256.Sum256([]byte(base))
			if err := rsa.VerifyPKCS1v15(pub.(*rsa.PublicKey), crypto.SHA256, h[:], rawSig); err != nil {
				t.Fatalf("independent verify: %v", err)
			}
			// The same vector through the inbound Verifier, as the Directory
			// checks it: label, tag, clock window, then the nonce.
			now := func() time.Time { return sigs[0].Created.Add(time.Minute) }
			v9, err := sig.NewVerifier(sig.KeyResolverFunc(func(_ context.Context, id sig.KeyID) (*sig.Key, error) {
				if id.String() != v.KeyID {
					return nil, sig.ErrUnknownKey
				}
				return &sig.Key{Public: pub, Owner: v.KeyOwner, Alg: sig.AlgRSAv15SHA256}, nil
			}), &sig.VerifierConfig{
				Now:    now,
				Label:  "directory",
				Tag:    tc.tag,
				Nonces: sig.NewMemoryNonceStore(&sig.MemoryNonceStoreConfig{Now: now}),
			})
			if err != nil {
				t.Fatal(err)
			}
			in := func() *http.Request {
				r := httptest.NewRequest(v.Method, v.Target, strings.NewReader(v.Body))
				r.Host = v.Authority
				r.Header = req.Header.Clone()
				return r
			}
			res, err := v9.Verify(in())
			if err != nil || res.Owner != v.KeyOwner || res.Scheme != sig.SchemeRFC9421 || res.Nonce != tc.nonce {
				t.Fatalf("Verifier: %+v, %v", res, err)
			}
			if _, err := v9.Verify(in()); !errors.Is(err, sig.ErrReplay) {
				t.Fatalf("replayed vector: %v", err)
			}
			if tc.name == "v1/activity-relay-register" {
				s := sha256.Sum256([]byte(base))
				if len(base) != 516 || hex.EncodeToString(s[:]) != "b4fa082ff9d82bf1b8ffc9b117633ccc97c4cd4c7b7400ee6bcd06ebad192718" {
					t.Errorf("base is %d bytes, sha256 %x", len(base), s)
				}
			}
		})
	}
}

// TestDirectoryVectorsReproduce signs the three activity-relay-register
// vectors with testKey.pem, a fixed clock and a fixed nonce, and compares
// the headers byte for byte.
func TestDirectoryVectorsReproduce(t *testing.T) {
	keyPEM := fixture.Shared(t, "directory/testKey.pem")
	key, err := sig.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range dirVectors {
		if !tc.reproduce {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			v := loadDirVector(t, tc.rel)
			created, err := time.Parse(http.TimeFormat, v.Date)
			if err != nil {
				t.Fatal(err)
			}
			req := v.request(t)
			req.Header.Set("Content-Digest", sig.ContentDigest([]byte(v.Body)))
			err = sig.SignRFC9421(req, key, &sig.SignOpts{
				Label:      "directory",
				Components: []string{"@method", "@authority", "@target-uri", "content-digest", "content-type", "date"},
				KeyID:      v.KeyID,
				Alg:        sig.AlgRSAv15SHA256,
				Tag:        tc.tag,
				Nonce:      tc.nonce,
				Created:    created,
				Expires:    created.Add(300 * time.Second),
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := req.Header.Get("Signature-Input"); got != v.SignatureInput {
				t.Errorf("Signature-Input\n got %s\nwant %s", got, v.SignatureInput)
			}
			if got := req.Header.Get("Signature"); got != v.Signature {
				t.Errorf("Signature\n got %s\nwant %s", got, v.Signature)
			}
			pemOut, err := sig.MarshalPublicKeyPEM(key.Public())
			if err != nil {
				t.Fatal(err)
			}
			if string(pemOut) != v.PublicKeyPEM {
				t.Errorf("public key PEM differs")
			}
		})
	}
}
