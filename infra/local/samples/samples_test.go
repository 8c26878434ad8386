package samples

import (
	"context"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"payments/infra/local/localca"
	"payments/pkg/outbound"
	"payments/pkg/providers/kyc"
)

// start serves the sample documents on a free port with a certificate of
// a new CA, until the test ends.
func start(t *testing.T) *Server {
	t.Helper()
	ca, err := localca.New()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start("127.0.0.1:0", ca)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestServer(t *testing.T) {
	s := start(t)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CA) {
		t.Fatal("the CA PEM holds no certificate")
	}
	c := outbound.New(outbound.WithRootCAs(pool), outbound.WithAllowLoopback(true), outbound.WithMaxBody(1<<20))
	tests := []struct {
		path     string
		readable string
	}{
		{FrontPath, "image/png"},
		{BackPath, "application/pdf"},
		{HTMLPath, ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res, err := c.Get(context.Background(), s.URL+tt.path)
			if err != nil || res.StatusCode != http.StatusOK {
				t.Fatalf("%+v %v", res.StatusCode, err)
			}
			if got, _ := kyc.ContentType(res.Body); got != tt.readable {
				t.Errorf("sniffed %q, want %q", got, tt.readable)
			}
		})
	}
}

func TestTrustBundle(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.pem")
	other := start(t)
	if err := os.WriteFile(base, other.CA, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSL_CERT_FILE", base)
	s := start(t)
	out := filepath.Join(dir, "bundle.pem")
	if err := TrustBundle(s.CA, out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "BEGIN CERTIFICATE"); n != 2 {
		t.Fatalf("%d certificates in the bundle, want the base one and the new CA", n)
	}
	// A bundle made from this one does not hold the CA twice.
	t.Setenv("SSL_CERT_FILE", out)
	if err := TrustBundle(s.CA, out); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(out); string(again) != string(b) {
		t.Fatalf("the bundle changed when made again from itself:\n%s", again)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(b)
	for _, srv := range []*Server{other, s} {
		c := outbound.New(outbound.WithRootCAs(pool), outbound.WithAllowLoopback(true))
		if _, err := c.Get(context.Background(), srv.URL+FrontPath); err != nil {
			t.Errorf("%s not trusted through the bundle: %v", srv.URL, err)
		}
	}
}
