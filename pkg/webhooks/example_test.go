package webhooks_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"payments/pkg/webhooks"
)

// verifyWebhook is the receiver-side recipe of docs/webhooks.md, with the
// standard library only: it returns the body when the X-Service-Signature
// header verifies. During a rotation's overlap the header carries two v1
// values, one per secret: one matching is enough.
func verifyWebhook(r *http.Request, secret string) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20)) // the raw bytes, before any JSON decoding
	if err != nil {
		return nil, err
	}
	var ts string
	var v1s []string
	for _, part := range strings.Split(r.Header.Get("X-Service-Signature"), ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			v1s = append(v1s, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		return nil, errors.New("missing or stale timestamp")
	}
	mac := hmac.New(sha256.New, []byte(secret)) // the secret's characters as they are
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, v1 := range v1s {
		if got, err := hex.DecodeString(v1); err == nil && hmac.Equal(got, want) { // constant time
			return body, nil
		}
	}
	return nil, errors.New("bad signature")
}

func Example_verifyWebhook() {
	secret := "7c1f0e5d2b8a4c6e9f3a1b0d5e7c2a4f6b8d0e1f3a5c7e9b2d4f6a8c0e2b4d6f"
	body := []byte(`{"event":"card.fund","data":{"transaction_id":"t1","card_id":"c1","amount":25,"currency":"USD","fee_amount":0.5}}`)

	r := httptest.NewRequest(http.MethodPost, "/webhooks", strings.NewReader(string(body)))
	r.Header.Set("X-Service-Signature", webhooks.Sign(secret, time.Now(), body))
	_, err := verifyWebhook(r, secret)
	fmt.Println("genuine:", err)

	r = httptest.NewRequest(http.MethodPost, "/webhooks", strings.NewReader(strings.Replace(string(body), "25", "2500", 1)))
	r.Header.Set("X-Service-Signature", webhooks.Sign(secret, time.Now(), body))
	_, err = verifyWebhook(r, secret)
	fmt.Println("tampered:", err)

	// A rotation's overlap: the new secret's v1 first, the previous one's
	// after; the receiver still holding the previous secret accepts it.
	ep := webhooks.Endpoint{Secret: "whsec_new", PreviousSecret: secret, PreviousExpiresAt: time.Now().Add(time.Hour)}
	r = httptest.NewRequest(http.MethodPost, "/webhooks", strings.NewReader(string(body)))
	r.Header.Set("X-Service-Signature", ep.Sign(time.Now(), body))
	_, err = verifyWebhook(r, secret)
	fmt.Println("during a rotation:", err)
	// Output:
	// genuine: <nil>
	// tampered: bad signature
	// during a rotation: <nil>
}

// A receiver needs only its endpoint's secret to check a delivery: during a
// rotation's overlap the header carries one v1 per secret, and a receiver
// holding either the new or the previous secret accepts it.
func ExampleVerify() {
	body := []byte(`{"event":"card.fund","data":{"transaction_id":"t1"}}`)
	now := time.Now()
	ep := webhooks.Endpoint{Secret: "whsec_new", PreviousSecret: "whsec_old", PreviousExpiresAt: now.Add(time.Hour)}
	header := ep.Sign(now, body) // what the delivery's X-Service-Signature holds

	for _, secret := range []string{"whsec_new", "whsec_old", "whsec_other"} {
		err := webhooks.Verify(header, body, secret, 5*time.Minute, time.Now())
		fmt.Printf("%s: %v\n", secret, err)
	}
	// Output:
	// whsec_new: <nil>
	// whsec_old: <nil>
	// whsec_other: webhooks: signature does not verify
}
