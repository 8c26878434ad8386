package localca_test

import (
	"bytes"
	"crypto/x509"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"payments/infra/local/localca"
)

// TestLoadKeepsTheCA loads the CA of a fresh data folder from several
// processes' worth of goroutines at once, then again: every load returns
// the one CA written there, with its key readable by the owner only.
func TestLoadKeepsTheCA(t *testing.T) {
	data := t.TempDir()
	cas := make([]*localca.CA, 8)
	var wg sync.WaitGroup
	for i := range cas {
		wg.Go(func() {
			ca, err := localca.Load(data)
			if err != nil {
				t.Error(err)
				return
			}
			cas[i] = ca
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	again, err := localca.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, ca := range append(cas, again) {
		if !bytes.Equal(ca.PEM, again.PEM) {
			t.Fatal("two loads of one data folder returned different CAs")
		}
	}
	onDisk, err := os.ReadFile(filepath.Join(localca.Dir(data), localca.CertFile))
	if err != nil || !bytes.Equal(onDisk, again.PEM) {
		t.Fatalf("%s does not hold the CA: %v", localca.CertFile, err)
	}
	st, err := os.Stat(filepath.Join(localca.Dir(data), localca.KeyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the key file: %v, mode %v, want 0600", err, st.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(data, "local-ca.tmp-*")); len(left) != 0 {
		t.Errorf("temporary folders left: %q", left)
	}
}

// TestIssue checks a certificate the CA issues against a pool holding only
// the CA's PEM, for each name a local receiver is reached by.
func TestIssue(t *testing.T) {
	ca, err := localca.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue()
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca.PEM) {
		t.Fatal("the CA's PEM holds no certificate")
	}
	for _, name := range []string{"127.0.0.1", "::1", "localhost"} {
		if _, err := cert.Leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: pool}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	other, err := localca.New()
	if err != nil {
		t.Fatal(err)
	}
	foreign := x509.NewCertPool()
	foreign.AppendCertsFromPEM(other.PEM)
	if _, err := cert.Leaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: foreign}); err == nil {
		t.Error("another CA's pool trusts the certificate")
	}
}

// TestLoadRefusesABrokenCA: a damaged CA folder is an error that names
// it, not a new CA that a running stack would not trust.
func TestLoadRefusesABrokenCA(t *testing.T) {
	data := t.TempDir()
	if _, err := localca.Load(data); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(localca.Dir(data), localca.KeyFile), []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := localca.Load(data); err == nil {
		t.Fatal("Load accepted a damaged key")
	}
}
