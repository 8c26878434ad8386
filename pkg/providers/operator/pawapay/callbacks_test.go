package pawapay

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"payments/pkg/providers/operator"
)

// signed builds a callback signed with key at t, as the signatures page
// describes, for the cases the simulation does not produce; the ECDSA
// signature is r||s (RFC 9421 §3.3.4).
func signed(t testing.TB, key *ecdsa.PrivateKey, at time.Time, body string) http.Header {
	t.Helper()
	return signedAs(t, key, at, body, false)
}

// signedAs is signed with the signature DER-encoded when der is set, as
// pawaPay's signature example verifies pawaPay's signatures.
func signedAs(t testing.TB, key *ecdsa.PrivateKey, at time.Time, body string, der bool) http.Header {
	t.Helper()
	d := sha512.Sum512([]byte(body))
	h := http.Header{}
	h.Set("Host", "payments.example")
	h.Set("Content-Type", "application/json")
	h.Set("Content-Digest", "sha-512=:"+base64.StdEncoding.EncodeToString(d[:])+":")
	h.Set("Signature-Date", at.UTC().Format(time.RFC3339))
	params := fmt.Sprintf(`("@method" "@authority" "@path" "signature-date" "content-digest" "content-type");alg="ecdsa-p256-sha256";keyid="k";created=%d`, at.Unix())
	base := "\"@method\": POST\n\"@authority\": payments.example\n\"@path\": /cb\n" +
		"\"signature-date\": " + h.Get("Signature-Date") + "\n\"content-digest\": " + h.Get("Content-Digest") +
		"\n\"content-type\": application/json\n\"@signature-params\": " + params
	sum := sha256.Sum256([]byte(base))
	r, s, err := ecdsa.Sign(rand.Reader, key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	if der {
		if sig, err = ecdsa.SignASN1(rand.Reader, key, sum[:]); err != nil {
			t.Fatal(err)
		}
	}
	h.Set("Signature-Input", "sig-pp="+params)
	h.Set("Signature", "sig-pp=:"+base64.StdEncoding.EncodeToString(sig)+":")
	return h
}

func publicPEM(t testing.TB, key *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

const completedBody = `{"payoutId":"f4401bd2-1568-4140-bf2d-eb77d2b2b639","status":"COMPLETED","amount":"100","currency":"XAF","metadata":{"companyId":"0196a0c1-0000-7000-8000-00000000c009"}}`

func TestVerify(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cbs, err := NewCallbacks(publicPEM(t, key), 5*time.Minute, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func() (http.Header, string)
		want error
	}{
		{"valid", func() (http.Header, string) { return signed(t, key, now, completedBody), completedBody }, nil},
		{"valid, signature DER-encoded", func() (http.Header, string) { return signedAs(t, key, now, completedBody, true), completedBody }, nil},
		{"valid, metadata echoed as the list sent", func() (http.Header, string) {
			b := strings.Replace(completedBody, `{"companyId":"0196a0c1-0000-7000-8000-00000000c009"}`, `[{"companyId":"0196a0c1-0000-7000-8000-00000000c009"},{"orderId":"o-1","isPII":false}]`, 1)
			return signed(t, key, now, b), b
		}, nil},
		{"tampered body", func() (http.Header, string) {
			return signed(t, key, now, completedBody), strings.Replace(completedBody, "100", "900", 1)
		}, ErrSignature},
		{"wrong key", func() (http.Header, string) { return signed(t, other, now, completedBody), completedBody }, ErrSignature},
		{"no Signature", func() (http.Header, string) {
			h := signed(t, key, now, completedBody)
			h.Del("Signature")
			return h, completedBody
		}, ErrSignature},
		{"no Content-Digest", func() (http.Header, string) {
			h := signed(t, key, now, completedBody)
			h.Del("Content-Digest")
			return h, completedBody
		}, ErrSignature},
		{"stale", func() (http.Header, string) { return signed(t, key, now.Add(-time.Hour), completedBody), completedBody }, ErrStale},
		{"from the future", func() (http.Header, string) { return signed(t, key, now.Add(time.Hour), completedBody), completedBody }, ErrStale},
		{"wrong digest algorithm", func() (http.Header, string) {
			h := signed(t, key, now, completedBody)
			h.Set("Content-Digest", "md5=:"+base64.StdEncoding.EncodeToString([]byte("0123456789abcdef"))+":")
			return h, completedBody
		}, ErrSignature},
		{"REJECTED: an initiation's answer, not a callback's", func() (http.Header, string) {
			b := strings.Replace(completedBody, "COMPLETED", "REJECTED", 1)
			return signed(t, key, now, b), b
		}, ErrMalformed},
		{"unknown status", func() (http.Header, string) {
			b := strings.Replace(completedBody, "COMPLETED", "TELEPORTED", 1)
			return signed(t, key, now, b), b
		}, ErrMalformed},
		{"not JSON", func() (http.Header, string) { return signed(t, key, now, "{"), "{" }, ErrMalformed},
		{"a signature that does not cover the request's path", func() (http.Header, string) {
			d := sha512.Sum512([]byte(completedBody))
			h := http.Header{}
			h.Set("Host", "payments.example")
			h.Set("Content-Digest", "sha-512=:"+base64.StdEncoding.EncodeToString(d[:])+":")
			h.Set("Signature-Date", now.UTC().Format(time.RFC3339))
			params := fmt.Sprintf(`("@method" "@authority" "signature-date" "content-digest");alg="ecdsa-p256-sha256";keyid="k";created=%d`, now.Unix())
			base := "\"@method\": POST\n\"@authority\": payments.example\n\"signature-date\": " + h.Get("Signature-Date") +
				"\n\"content-digest\": " + h.Get("Content-Digest") + "\n\"@signature-params\": " + params
			sum := sha256.Sum256([]byte(base))
			sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
			if err != nil {
				t.Fatal(err)
			}
			h.Set("Signature-Input", "sig-pp="+params)
			h.Set("Signature", "sig-pp=:"+base64.StdEncoding.EncodeToString(sig)+":")
			return h, completedBody
		}, ErrSignature},
		{"no company in its metadata", func() (http.Header, string) {
			b := strings.Replace(completedBody, `"companyId":"0196a0c1-0000-7000-8000-00000000c009"`, `"orderId":"o-1"`, 1)
			return signed(t, key, now, b), b
		}, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, body := tt.edit()
			cb, err := cbs.Verify(http.MethodPost, "/cb", h, []byte(body))
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
			if tt.want == nil && (cb.Result.State != operator.Succeeded || cb.CompanyID != "0196a0c1-0000-7000-8000-00000000c009" || cb.Kind != operator.Payout) {
				t.Fatalf("Verify = %+v", cb)
			}
		})
	}
}

// TestVerifyNonFinalCallback: a PROCESSING callback (a deposit awaiting
// the payer's authorisation) verifies, as a Processing result.
func TestVerifyNonFinalCallback(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cbs, err := NewCallbacks(publicPEM(t, key), 5*time.Minute, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	b := strings.Replace(completedBody, "COMPLETED", "PROCESSING", 1)
	cb, err := cbs.Verify(http.MethodPost, "/cb", signed(t, key, now, b), []byte(b))
	if err != nil || cb.Result.State != operator.Processing {
		t.Fatalf("Verify = %+v, %v", cb, err)
	}
}

func TestNewCallbacksRefusesABadKey(t *testing.T) {
	for _, k := range [][]byte{nil, []byte("not pem"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte{1, 2}})} {
		if _, err := NewCallbacks(k, time.Minute, nil); err == nil {
			t.Errorf("NewCallbacks(%q) accepted it", k)
		}
	}
}

// FuzzVerify checks that no header or body makes Verify panic.
func FuzzVerify(f *testing.F) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h := signed(f, key, now, completedBody)
	f.Add(h.Get("Signature-Input"), h.Get("Signature"), h.Get("Content-Digest"), completedBody)
	f.Add(`sig=("@method";x);alg=`, `sig=::`, `sha-256=:=:`, `[]`)
	f.Add(`a=(,b=")`, `,,,`, `sha-512=:`, `{"payoutId":1}`)
	cbs, err := NewCallbacks(publicPEM(f, key), time.Hour, func() time.Time { return now })
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, input, sig, digest, body string) {
		hh := h.Clone()
		hh.Set("Signature-Input", input)
		hh.Set("Signature", sig)
		hh.Set("Content-Digest", digest)
		_, _ = cbs.Verify(http.MethodPost, "/cb", hh, []byte(body))
	})
}

// TestStatusTable checks every row of the status table and every failure
// code: no code is without its reason, and no status but COMPLETED is a
// success.
func TestStatusTable(t *testing.T) {
	tests := []struct {
		status, code string
		want         operator.State
		ask, unknown bool
	}{
		{"ACCEPTED", "", operator.Processing, false, false},
		{"ENQUEUED", "", operator.Processing, false, false},
		{"SUBMITTED", "", operator.Processing, false, false},
		{"PROCESSING", "", operator.Processing, false, false},
		{"IN_RECONCILIATION", "", operator.Processing, false, false},
		{"COMPLETED", "", operator.Succeeded, false, false},
		{"DUPLICATE_IGNORED", "", "", true, false},
		{"NO_SUCH_STATUS", "", "", false, true},
	}
	for code := range failureReasons {
		tests = append(tests, struct {
			status, code string
			want         operator.State
			ask, unknown bool
		}{"FAILED", code, operator.Failed, false, false}, struct {
			status, code string
			want         operator.State
			ask, unknown bool
		}{"REJECTED", code, operator.Failed, false, false})
	}
	for _, tt := range tests {
		t.Run(tt.status+"_"+tt.code, func(t *testing.T) {
			state, reason, o := interpret(tt.status, tt.code)
			if state != tt.want || o.ask != tt.ask || (o.err != nil) != tt.unknown {
				t.Fatalf("interpret = %q, %q, %+v", state, reason, o)
			}
			if tt.unknown && !errors.Is(o.err, operator.ErrUnavailable) {
				t.Fatalf("unknown outcome %v does not wrap ErrUnavailable", o.err)
			}
			if state == operator.Failed && (reason == "" || reason != failureReasons[tt.code]) {
				t.Fatalf("reason %q for %s", reason, tt.code)
			}
		})
	}
	if _, reason, _ := interpret("FAILED", "A_CODE_ADDED_LATER"); reason != unknownFailureReason {
		t.Fatalf("an unknown code's reason is %q", reason)
	}
}
