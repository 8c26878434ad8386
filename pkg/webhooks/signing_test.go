package webhooks_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"payments/pkg/webhooks"
)

func TestNewSecret(t *testing.T) {
	hex64 := regexp.MustCompile(`^[0-9a-f]{64}$`)
	seen := map[string]bool{}
	for range 20 {
		s, err := webhooks.NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		if !hex64.MatchString(s) || seen[s] {
			t.Fatalf("secret %q: not 64 lowercase hex characters, or repeated", s)
		}
		seen[s] = true
	}
}

// TestSignatureVerifiesWithStripe checks our header against an
// implementation that is not ours: stripe-go's webhook package reads the
// same "t=…,v1=…" header and takes the secret as a string, as we do.
func TestSignatureVerifiesWithStripe(t *testing.T) {
	secret, _ := webhooks.NewSecret()
	body := []byte(`{"event":"card.fund","data":{"transaction_id":"t1","card_id":"c1","amount":25,"currency":"USD","fee_amount":0.5}}`)
	now := time.Now()
	header := webhooks.Sign(secret, now, body)

	// The recipe of docs/webhooks.md, by hand: HMAC-SHA256 keyed with the
	// secret's text over "<t>.<body>".
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(now.Unix(), 10) + "." + string(body)))
	if want := "t=" + strconv.FormatInt(now.Unix(), 10) + ",v1=" + hex.EncodeToString(m.Sum(nil)); header != want {
		t.Fatalf("header %s, want %s", header, want)
	}
	if want := "t=" + strconv.FormatInt(now.Unix(), 10) + ",v1=" + hex.EncodeToString(webhook.ComputeSignature(now, body, secret)); header != want {
		t.Fatalf("header %s, stripe computes %s", header, want)
	}

	other, _ := webhooks.NewSecret()
	tests := []struct {
		name   string
		body   []byte
		header string
		secret string
		ok     bool
	}{
		{"as sent", body, header, secret, true},
		{"body changed", []byte(string(body[:len(body)-1]) + " }"), header, secret, false},
		{"other secret", body, header, other, false},
		{"too old", body, webhooks.Sign(secret, now.Add(-10*time.Minute), body), secret, false},
		{"malformed", body, "v1=abc", secret, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stripeErr := webhook.ValidatePayloadWithTolerance(tt.body, tt.header, tt.secret, 300*time.Second)
			ourErr := webhooks.Verify(tt.header, tt.body, tt.secret, 300*time.Second, time.Now())
			if (stripeErr == nil) != tt.ok || (ourErr == nil) != tt.ok {
				t.Fatalf("stripe: %v, ours: %v; want ok %v", stripeErr, ourErr, tt.ok)
			}
			if ourErr != nil && !errors.Is(ourErr, webhooks.ErrBadSignature) {
				t.Fatalf("ours: %v", ourErr)
			}
		})
	}
}
