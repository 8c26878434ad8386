package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SecretBytes is the number of random bytes of a signing secret; its text
// is their lowercase hex, 64 characters.
const SecretBytes = 32

// ErrBadSignature is a signature header that does not verify.
var ErrBadSignature = errors.New("webhooks: signature does not verify")

// NewSecret returns a new signing secret: 64 lowercase hex characters from
// crypto/rand.
func NewSecret() (string, error) {
	b := make([]byte, SecretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("webhooks: random secret: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// Sign returns the X-Service-Signature value of body at time t:
// "t=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of "<t>.<body>">". The
// HMAC key is the secret's text as is (its 64 hex characters, not the bytes
// they encode), the way common webhook libraries take a secret.
func Sign(secret string, t time.Time, body []byte) string { return header(t, body, secret) }

// header returns the X-Service-Signature value of body at time t with one
// v1 per secret, in their order.
func header(t time.Time, body []byte, secrets ...string) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	h := "t=" + ts
	for _, s := range secrets {
		h += ",v1=" + hex.EncodeToString(mac(s, ts, body))
	}
	return h
}

func mac(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks a signature header against the raw body as a receiver
// should: the v1 value must match in constant time, and t must be within
// tolerance of now (0 skips the time check). It is the recipe of
// docs/webhooks.md.
func Verify(header string, body []byte, secret string, tolerance time.Duration, now time.Time) error {
	var ts string
	var sigs [][]byte
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return fmt.Errorf("%w: malformed header", ErrBadSignature)
	}
	if tolerance > 0 {
		if age := now.Sub(time.Unix(sec, 0)); age > tolerance || age < -tolerance {
			return fmt.Errorf("%w: timestamp outside the tolerance", ErrBadSignature)
		}
	}
	want := mac(secret, ts, body)
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			return nil
		}
	}
	return ErrBadSignature
}
