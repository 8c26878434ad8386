// Package outboundtest gives tests (and the local stack) an HTTPS server
// with its own certificate authority, as a real webhook receiver or
// document host would have one: the CA is generated per server, signs a
// leaf for 127.0.0.1, ::1 and localhost, and is handed to the client either
// as a pool (outbound.WithRootCAs) or as a PEM file for SSL_CERT_FILE.
package outboundtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// Server is a started HTTPS test server and its CA.
type Server struct {
	*httptest.Server
	// Pool trusts the server's CA only.
	Pool *x509.CertPool
	// CAFile is the CA certificate as a PEM file, for SSL_CERT_FILE.
	CAFile string
	// Conns counts the TCP connections the server accepted.
	Conns atomic.Int64
}

// CA is a certificate authority made for one test or one local run, and
// the key of a server certificate it issued for 127.0.0.1, ::1 and
// localhost.
type CA struct {
	// Cert is the CA's certificate; PEM is the same, PEM-encoded.
	Cert *x509.Certificate
	PEM  []byte
	// Leaf is the server certificate and its key.
	Leaf tls.Certificate
}

// NewCA makes a CA valid for validFor and its server certificate.
func NewCA(validFor time.Duration) (*CA, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "local CA " + now.UTC().Format(time.RFC3339)},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validFor),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validFor),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	return &CA{
		Cert: ca,
		PEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		Leaf: tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: leafKey},
	}, nil
}

// NewTLSServer starts an HTTPS server running h with a certificate issued
// by a fresh CA, and closes it when the test ends.
func NewTLSServer(t testing.TB, h http.Handler) *Server {
	t.Helper()
	ca, err := NewCA(24 * time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return NewTLSServerOf(t, h, ca)
}

// NewTLSServerOf starts an HTTPS server running h with the certificate
// ca issued, and closes it when the test ends: servers of one CA, which a
// process may trust once through SSL_CERT_FILE.
func NewTLSServerOf(t testing.TB, h http.Handler, ca *CA) *Server {
	t.Helper()
	s := &Server{Pool: x509.NewCertPool()}
	s.Pool.AddCert(ca.Cert)
	s.CAFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(s.CAFile, ca.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	s.Server = httptest.NewUnstartedServer(h)
	s.Server.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Leaf}}
	s.Server.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.Conns.Add(1)
		}
	}
	s.Server.StartTLS()
	t.Cleanup(s.Server.Close)
	return s
}
