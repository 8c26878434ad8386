// Package samples serves sample identity documents over HTTPS on this
// machine, so that a customer can be enrolled from document URLs with no
// Internet access: `make run` starts it (DOCS_PORT, 4443) and the tests of
// the local stack start it on a free port. It also signs the card issuer's
// sample notifications (SignIssuerEvent).
//
// Its certificate is issued at start by the CA it is given (`make run`'s
// kept local CA, see package localca). Go's TLS clients trust the CA
// through SSL_CERT_FILE, which must name a bundle holding it (see
// TrustBundle) before the process first verifies a certificate: the system
// roots are read once.
package samples

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net"
	"net/http"
	"os"
	"time"

	"payments/infra/local/localca"
)

// Paths of the documents served.
const (
	FrontPath = "/id-front.png"   // a PNG image
	BackPath  = "/id-back.pdf"    // a one-page PDF
	HTMLPath  = "/not-a-document" // an HTML page: "KYC document unreadable"
)

// PlaceholderURL is the base of the document URLs in the sample events
// (events/customers), which the tests and `make invoke` replace with a
// running server's URL.
const PlaceholderURL = "https://documents.example.com"

// Server is a running sample document server.
type Server struct {
	// URL is its base URL, https://127.0.0.1:<port>.
	URL string
	// CA is the PEM of the CA that issued its certificate.
	CA  []byte
	srv *http.Server
}

// Start serves the sample documents at addr ("127.0.0.1:4443"; port 0
// picks one) with a certificate ca issues.
func Start(addr string, ca *localca.CA) (*Server, error) {
	cert, err := ca.Issue()
	if err != nil {
		return nil, fmt.Errorf("samples: %w", err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("samples: %w", err)
	}
	mux := http.NewServeMux()
	serve := func(path, contentType string, body []byte) {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", contentType)
			w.Write(body)
		})
	}
	serve(FrontPath, "image/png", PNG())
	serve(BackPath, "application/pdf", PDF())
	serve(HTMLPath, "text/html; charset=utf-8", []byte("<!doctype html><title>Not a document</title><p>Sign in to see this file.</p>"))
	s := &Server{
		URL: "https://" + l.Addr().String(),
		CA:  ca.PEM,
		srv: &http.Server{
			Handler:           mux,
			TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
			ReadHeaderTimeout: 5 * time.Second,
		},
	}
	go s.srv.ServeTLS(l, "", "")
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// systemBundles are where Linux distributions keep their CA bundle, as Go
// looks for it.
var systemBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
}

// TrustBundle writes to path a CA bundle that holds ca and the roots the
// process trusts now: the file SSL_CERT_FILE names, else the system
// bundle. Pointing SSL_CERT_FILE at path then trusts the sample server
// without distrusting anything else. A ca the roots already hold (they
// come from an earlier bundle) is not added twice.
func TrustBundle(ca []byte, path string) error {
	files := systemBundles
	if f := os.Getenv("SSL_CERT_FILE"); f != "" {
		files = []string{f}
	}
	var bundle []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil {
			bundle = b
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("samples: read %s: %w", f, err)
		}
	}
	if !bytes.Contains(bundle, bytes.TrimSpace(ca)) {
		bundle = append(bytes.TrimRight(bundle, "\n"), '\n')
		bundle = append(bundle, ca...)
	}
	if err := os.WriteFile(path, bundle, 0o644); err != nil {
		return fmt.Errorf("samples: write the trust bundle: %w", err)
	}
	return nil
}

// PNG returns the sample front: a small PNG image.
func PNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 120, 76))
	for y := range 76 {
		for x := range 120 {
			c := color.RGBA{R: 230, G: 236, B: 245, A: 255}
			if y < 14 || (x > 8 && x < 40 && y > 24 && y < 66) {
				c = color.RGBA{R: 30, G: 80, B: 160, A: 255}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img) // encoding an in-memory RGBA image does not fail
	return b.Bytes()
}

// PDF returns the sample back: a one-page PDF.
func PDF() []byte {
	objects := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 243 153] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		"<< /Length 56 >>\nstream\nBT /F1 12 Tf 20 120 Td (Sample identity document) Tj ET\nendstream",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objects))
	for i, o := range objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return b.Bytes()
}
