package directorytest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/directory"
)

// Host is the name the TLS fake Directory answers as.
const Host = "directory.example"

// TLSCert returns a fresh self-signed certificate for Host and a pool
// trusting it.
func TLSCert(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: Host},
		DNSNames:              []string{Host, "*." + Host},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// LoopbackResolver resolves every name to 127.0.0.1.
type LoopbackResolver struct{}

// LookupNetIP implements client.Resolver.
func (LoopbackResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// LoopbackClient returns a guarded client with the Directory profile
// (directory.ClientConfig) that trusts pool, resolves every name to
// 127.0.0.1 and, for tests only, admits 127.0.0.0/8.
func LoopbackClient(t testing.TB, pool *x509.CertPool) *client.Client {
	t.Helper()
	cfg := directory.ClientConfig()
	cfg.AllowPrivate = append(cfg.AllowPrivate, netip.MustParsePrefix("127.0.0.0/8"))
	cfg.Resolver = LoopbackResolver{}
	cfg.TLSConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	hc, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hc.CloseIdleConnections)
	return hc
}

// StartTLS serves s over TLS on loopback as https://directory.example:<port>,
// sets s's origin to that, and returns a guarded client that reaches it.
// The server is closed at test cleanup.
func (s *Server) StartTLS(t testing.TB) *client.Client {
	t.Helper()
	cert, pool := TLSCert(t)
	ts := httptest.NewUnstartedServer(s)
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(ts.URL, "https://"))
	s.mu.Lock()
	s.cfg.Origin = "https://" + Host + ":" + port
	s.mu.Unlock()
	return LoopbackClient(t, pool)
}
