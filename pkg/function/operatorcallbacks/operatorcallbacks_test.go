package operatorcallbacks_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"payments/pkg/function"
	"payments/pkg/function/operatorcallbacks"
)

// queue records what the function sends.
type queue struct{ sent []string }

func (q *queue) Send(_ context.Context, body []byte, _ time.Duration) error {
	q.sent = append(q.sent, string(body))
	return nil
}

// TestSignedHeadersSurviveTheGateway sends, as API Gateway hands it to the
// function, a callback whose signed Content-Digest lists two digests
// (`sha-256=:…:, sha-512=:…:`, RFC 9530): the Lambda adapter splits the
// header at its comma, and the handler must read it back as signed.
func TestSignedHeadersSurviveTheGateway(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	now := time.Now()
	const host, path = "abc123.execute-api.eu-west-1.amazonaws.com", "/api/v1/operator/callbacks/pawapay"
	body := `{"payoutId":"0196a0c2-7b3e-7d41-9c55-2f1e8a9b0c1e","status":"COMPLETED","metadata":{"companyId":"0196a0c2-7b3e-7d41-9c55-2f1e8a9b0c1d"}}`
	d256, d512 := sha256.Sum256([]byte(body)), sha512.Sum512([]byte(body))
	digest := "sha-256=:" + base64.StdEncoding.EncodeToString(d256[:]) + ":, sha-512=:" + base64.StdEncoding.EncodeToString(d512[:]) + ":"
	date := now.UTC().Format(time.RFC3339)
	params := fmt.Sprintf(`("@method" "@authority" "@path" "signature-date" "content-digest" "content-type");alg="ecdsa-p256-sha256";keyid="k";created=%d`, now.Unix())
	base := `"@method": POST` + "\n" + `"@authority": ` + host + "\n" + `"@path": ` + path + "\n" + `"signature-date": ` + date + "\n" +
		`"content-digest": ` + digest + "\n" + `"content-type": application/json` + "\n" + `"@signature-params": ` + params
	sum := sha256.Sum256([]byte(base))
	sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	q := &queue{}
	cfg := function.Config{OperatorCallbackKey: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))}
	h, err := operatorcallbacks.Hooks(cfg, q, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	handler := operatorcallbacks.Handler(h)
	resp, err := handler(context.Background(), events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "POST " + path, RawPath: path, Body: body,
		Headers: map[string]string{
			"host": host, "content-type": "application/json", "content-digest": digest, "signature-date": date,
			"signature-input": "sig-pp=" + params, "signature": "sig-pp=:" + base64.StdEncoding.EncodeToString(sig) + ":",
		},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			Stage: "$default", DomainName: host,
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.7"},
		},
	})
	if err != nil || resp.StatusCode != 200 || len(q.sent) != 1 || !strings.Contains(q.sent[0], `"update"`) {
		t.Fatalf("answered %d %s (%v); queued %v", resp.StatusCode, resp.Body, err, q.sent)
	}
}
