package pawapaysim

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// GenerateKey returns a new EC P-256 key, the kind simulated pawaPay signs
// callbacks with (for tests and local runs).
func GenerateKey() (*ecdsa.PrivateKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pawapaysim: %w", err)
	}
	return k, nil
}

// PublicKeyPEM returns the public half of the callback signing key, as a
// PEM "PUBLIC KEY".
func (s *Sim) PublicKeyPEM() []byte {
	der, err := x509.MarshalPKIXPublicKey(&s.cfg.Key.PublicKey)
	if err != nil {
		panic(err) // a P-256 key always marshals
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// signatureLifetime is how long after its creation a callback signature
// expires (its expires parameter).
const signatureLifetime = time.Minute

// covered are the components a callback's signature covers, in order.
var covered = []string{"@method", "@authority", "@path", "signature-date", "content-digest", "content-type"}

// deliver posts data to the callback URL, signed.
func (s *Sim) deliver(ctx context.Context, data map[string]any) error {
	if s.cfg.CallbackURL == "" {
		return nil
	}
	body, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("pawapaysim: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.CallbackURL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("pawapaysim: callback: %w", err)
	}
	if err := s.sign(req, body); err != nil {
		return err
	}
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("pawapaysim: callback: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("pawapaysim: callback answered %d", resp.StatusCode)
	}
	return nil
}

// sign adds Content-Digest, Signature-Date, Signature-Input and Signature
// to a callback, as pawaPay's signatures page describes.
func (s *Sim) sign(req *http.Request, body []byte) error {
	now := s.cfg.Now().UTC()
	d := sha512.Sum512(body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Digest", "sha-512=:"+base64.StdEncoding.EncodeToString(d[:])+":")
	req.Header.Set("Signature-Date", now.Format(time.RFC3339))
	quoted := make([]string, len(covered))
	for i, c := range covered {
		quoted[i] = `"` + c + `"`
	}
	params := fmt.Sprintf(`(%s);alg="ecdsa-p256-sha256";keyid="%s";created=%d;expires=%d`,
		strings.Join(quoted, " "), s.cfg.KeyID, now.Unix(), now.Add(signatureLifetime).Unix())
	var base strings.Builder
	for _, c := range covered {
		var v string
		switch c {
		case "@method":
			v = req.Method
		case "@authority":
			v = strings.ToLower(req.URL.Host)
		case "@path":
			v = req.URL.EscapedPath()
		default:
			v = req.Header.Get(c)
		}
		base.WriteString(`"` + c + `": ` + v + "\n")
	}
	base.WriteString(`"@signature-params": ` + params)
	h := sha256.Sum256([]byte(base.String()))
	// DER, as pawaPay's signature example (pawaPay/signatures-node-example,
	// Node's createVerify) verifies pawaPay's signatures, rather than the
	// r||s of RFC 9421 §3.3.4; a verifier should take both.
	sig, err := ecdsa.SignASN1(rand.Reader, s.cfg.Key, h[:])
	if err != nil {
		return fmt.Errorf("pawapaysim: signing: %w", err)
	}
	req.Header.Set("Signature-Input", "sig-pp="+params)
	req.Header.Set("Signature", "sig-pp=:"+base64.StdEncoding.EncodeToString(sig)+":")
	return nil
}

// readBody reads a request's body, at most 1 MiB.
func readBody(r *http.Request) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r.Body, 1<<20))
}
