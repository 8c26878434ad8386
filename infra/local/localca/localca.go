// Package localca is the certificate authority of the local stack. `make
// run` keeps one in its data folder (Dir: made once, then reused at every
// start) and puts it in the CA bundle it gives the functions
// (SSL_CERT_FILE), so that a certificate it issues for 127.0.0.1 and
// localhost (the sample documents', `make listen`'s) is trusted by the
// functions of a running `make run`, with no restart. Tests make one in
// memory (New).
package localca

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Files of a kept CA, under its folder (Dir).
const (
	// CertFile is the CA's certificate (PEM), for curl --cacert.
	CertFile = "ca.pem"
	// KeyFile is the CA's private key (PKCS #8 PEM, mode 0600).
	KeyFile = "ca-key.pem"
)

// Validity of what the package makes.
const (
	// CAValidity is how long a CA made by Load or New is valid.
	CAValidity = 10 * 365 * 24 * time.Hour
	// LeafValidity is how long a certificate made by Issue is valid.
	LeafValidity = 30 * 24 * time.Hour
)

// CA is a certificate authority and its key.
type CA struct {
	// Cert is the CA's certificate; PEM is the same, PEM-encoded.
	Cert *x509.Certificate
	PEM  []byte
	key  crypto.Signer
}

// Dir returns the folder where Load keeps the CA of the data folder
// dataDir.
func Dir(dataDir string) string { return filepath.Join(dataDir, "local-ca") }

// New makes a CA in memory.
func New() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{Organization: []string{"payments local stack"}, CommonName: "local CA " + now.UTC().Format(time.RFC3339)},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(CAValidity),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), key: key}, nil
}

// Load returns the CA kept in Dir(dataDir), making it there first when
// there is none or it has expired. Processes that load at the same time
// get the same CA: a new one is written to a temporary folder and renamed
// into place, and the one that loses the race reads the winner's.
func Load(dataDir string) (*CA, error) {
	dir := Dir(dataDir)
	ca, err := read(dir)
	if err == nil && time.Now().Add(24*time.Hour).Before(ca.Cert.NotAfter) {
		return ca, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("localca: %s: %w (remove the folder to make a new CA)", dir, err)
	}
	if err == nil { // expiring: make a new one
		if err := os.RemoveAll(dir); err != nil {
			return nil, fmt.Errorf("localca: %w", err)
		}
	}
	if ca, err = New(); err != nil {
		return nil, fmt.Errorf("localca: %w", err)
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("localca: %w", err)
	}
	tmp, err := os.MkdirTemp(dataDir, "local-ca.tmp-")
	if err != nil {
		return nil, fmt.Errorf("localca: %w", err)
	}
	defer os.RemoveAll(tmp)
	keyDER, err := x509.MarshalPKCS8PrivateKey(ca.key)
	if err != nil {
		return nil, fmt.Errorf("localca: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, KeyFile), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, fmt.Errorf("localca: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, CertFile), ca.PEM, 0o644); err != nil {
		return nil, fmt.Errorf("localca: %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("localca: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process made it first: use its CA.
		if theirs, rerr := read(dir); rerr == nil {
			return theirs, nil
		}
		return nil, fmt.Errorf("localca: %w", err)
	}
	return ca, nil
}

// read reads the CA kept in dir.
func read(dir string) (*CA, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, CertFile))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, KeyFile))
	if err != nil {
		return nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok || !cert.IsCA {
		return nil, errors.New("not a CA certificate and its key")
	}
	return &CA{Cert: cert, PEM: certPEM, key: signer}, nil
}

// Issue makes a server certificate for 127.0.0.1, ::1 and localhost,
// valid for LeafValidity, signed by ca.
func (ca *CA) Issue() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	notAfter := now.Add(LeafValidity)
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("localca: issue: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// serial returns a random serial number: certificates of one CA must not
// share one.
func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120)) // crypto/rand does not fail
	return n
}
