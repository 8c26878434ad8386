package samples

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"payments/pkg/issuerhooks"
	"payments/pkg/webhooks"
)

func TestSignIssuerEvent(t *testing.T) {
	const secret = "local-issuer-webhook-secret-0123456789abcdef"
	now := time.Unix(1746093600, 0)
	tests := []struct {
		name   string
		event  string
		body   string // the body signed; "" for an event left as it is
		signed bool
	}{
		{"text body", `{"headers":{"x-issuer-signature":"` + IssuerSignature + `"},"body":"{\"id\": \"evt_1\"}"}`, `{"id": "evt_1"}`, true},
		{"base64 body", `{"headers":{"x-issuer-signature":"` + IssuerSignature + `"},"isBase64Encoded":true,"body":"eyJpZCI6ImV2dF8yIn0="}`, `{"id":"evt_2"}`, true},
		{"no placeholder", `{"headers":{"x-issuer-signature":"t=1,v1=00"},"body":"{}"}`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := SignIssuerEvent([]byte(tt.event), secret, now)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.signed {
				if !bytes.Equal(out, []byte(tt.event)) {
					t.Fatalf("changed to %s", out)
				}
				return
			}
			var e events.APIGatewayV2HTTPRequest
			if err := json.Unmarshal(out, &e); err != nil {
				t.Fatal(err)
			}
			header := e.Headers["x-issuer-signature"]
			if header != issuerhooks.Sign([]byte(secret), []byte(tt.body), now) {
				t.Fatalf("header %q", header)
			}
			if err := webhooks.Verify(header, []byte(tt.body), secret, issuerhooks.Tolerance, now); err != nil {
				t.Fatal(err)
			}
		})
	}
}
