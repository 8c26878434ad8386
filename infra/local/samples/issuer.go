package samples

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"payments/pkg/issuerhooks"
)

// IssuerSignature is the placeholder of the X-Issuer-Signature header in
// the sample notifications of events/issuer-webhooks: a signature holds a
// time, which a file cannot keep fresh. The tests and `make invoke` replace
// it with the signature of the event's body made at once (SignIssuerEvent).
const IssuerSignature = "SIGNED-WITH-THE-ISSUER-SECRET"

// SignIssuerEvent returns the API Gateway event payload with the
// IssuerSignature placeholder replaced by the X-Issuer-Signature of its
// body, signed with secret at now. A payload without the placeholder is
// returned as it is.
func SignIssuerEvent(payload []byte, secret string, now time.Time) ([]byte, error) {
	if !bytes.Contains(payload, []byte(IssuerSignature)) {
		return payload, nil
	}
	var e events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(payload, &e); err != nil {
		return nil, fmt.Errorf("samples: sign an issuer notification: %w", err)
	}
	body := []byte(e.Body)
	if e.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(e.Body); err != nil {
			return nil, fmt.Errorf("samples: sign an issuer notification: %w", err)
		}
	}
	header := issuerhooks.Sign([]byte(secret), body, now)
	return bytes.ReplaceAll(payload, []byte(IssuerSignature), []byte(header)), nil
}
