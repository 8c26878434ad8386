package issuerhooks_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"payments/pkg/app/apptest"
	"payments/pkg/function"
	"payments/pkg/function/issuerauthorizations"
	"payments/pkg/function/issuerwebhooks"
	"payments/pkg/httpapi"
	"payments/pkg/issuerhooks"
	"payments/pkg/queue/queuetest"
	"payments/pkg/store/storetest"
	"payments/pkg/waittest"
)

// issuerTestNow is the clock of the issuer-webhooks function in these
// tests.
var issuerTestNow = time.Unix(1746093600, 0)

// issuerTestNotification is a notification as an issuer may send it: its
// spacing and the order of its fields are its own, and must reach the queue
// as sent.
const issuerTestNotification = `{"type": "authorization.advice", "decision": "APPROVED", "id": "evt_auth_0001",  "card_id": "card_00000000-0000-7000-8000-00000000a001",` +
	` "reference": "0196d1e2-0000-7000-8000-0000000ca4d1", "created_at": "2025-05-01T10:00:00Z",` +
	` "transaction": {"id": "ntx_0001", "kind": "AUTHORIZATION", "amount": 1250, "currency": "USD",` +
	` "merchant": {"name": "Café Nyama", "city": "Douala", "country": "CM"}}}`

// issuerHookEnv is the issuer-webhooks function over a fresh issuer-events
// queue of the SQS emulator, its clock at issuerTestNow.
type issuerHookEnv struct {
	cfg   function.Config
	sqs   *sqs.Client
	queue string
	h     function.HTTPHandler
}

func newIssuerHookEnv(t *testing.T) *issuerHookEnv {
	t.Helper()
	e := &issuerHookEnv{sqs: queuetest.Client(t)}
	e.queue = queuetest.NewQueue(t, e.sqs, nil)
	e.cfg = function.Config{
		AWS:                  storetest.AWSConfig(),
		SQSEndpoint:          os.Getenv("AWS_ENDPOINT_URL_SQS"),
		IssuerEventsQueueURL: e.queue,
		IssuerWebhookSecret:  apptest.IssuerTestSecret,
	}
	var err error
	if e.h, err = issuerwebhooks.NewWithClock(apptest.Recording(e.cfg, "issuer-webhooks"), func() time.Time { return issuerTestNow }); err != nil {
		t.Fatal(err)
	}
	return e
}

// post sends body to POST /issuer/webhooks with the given headers, and no
// token.
func (e *issuerHookEnv) post(t *testing.T, headers map[string]string, body string) (int, string) {
	t.Helper()
	res := apptest.AuthTestCall(t, e.h, apptest.AuthTestEvent("POST", "/api/v1/issuer/webhooks", "198.51.100.7", headers, body))
	return res.StatusCode, res.Body
}

// issuerSigned returns the signature header of body signed with the issuer's
// secret at t.
func issuerSigned(body string, t time.Time) map[string]string {
	return map[string]string{issuerhooks.Header: issuerhooks.Sign(apptest.IssuerTestSecret, []byte(body), t)}
}

// queued returns how many messages the queue holds: visible, in flight or
// delayed. A send is over when the handler answers, so the count is
// final then.
func (e *issuerHookEnv) queued(t *testing.T) int {
	t.Helper()
	return queuetest.Depth(t, e.sqs, e.queue)
}

// bodies receives every message the queue holds (queued) and returns their
// bodies; they stay in flight.
func (e *issuerHookEnv) bodies(t *testing.T) []string {
	t.Helper()
	want := e.queued(t)
	var got []string
	waittest.Until(t, 5*time.Second, fmt.Sprintf("the %d queued messages are received", want), func() bool {
		out, err := e.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(e.queue), MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 60,
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			got = append(got, aws.ToString(m.Body))
		}
		return len(got) >= want
	})
	return got
}

// TestSandboxFormatNotServedInProduction: in production mode the card
// issuer is Stripe, whose events and requests reach POST
// /issuer/stripe/webhooks; the sandbox format's routes answer 404
// ROUTE_NOT_FOUND, a well-signed notification included, and queue nothing.
func TestSandboxFormatNotServedInProduction(t *testing.T) {
	e := newIssuerHookEnv(t)
	cfg := e.cfg
	cfg.Mode = function.ModeProduction
	hooks, err := issuerwebhooks.NewWithClock(apptest.Recording(cfg, "issuer-webhooks"), func() time.Time { return issuerTestNow })
	if err != nil {
		t.Fatal(err)
	}
	auths, err := issuerauthorizations.New(context.Background(), apptest.Recording(cfg, "issuer-authorizations"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		h    function.HTTPHandler
		path string
	}{{hooks, "/api/v1/issuer/webhooks"}, {auths, "/api/v1/issuer/authorizations"}} {
		res := apptest.AuthTestCall(t, tt.h, apptest.AuthTestEvent("POST", tt.path, "198.51.100.7",
			issuerSigned(issuerTestNotification, issuerTestNow), issuerTestNotification))
		if res.StatusCode != 404 || !strings.Contains(res.Body, "ROUTE_NOT_FOUND") {
			t.Errorf("POST %s in production mode: %d %s", tt.path, res.StatusCode, res.Body)
		}
	}
	if n := e.queued(t); n != 0 {
		t.Errorf("%d notifications queued", n)
	}
}

// TestIssuerWebhookAccepted: a notification signed with the issuer's secret,
// without a token, is 202 with its id, and its raw body is the one message
// on the issuer-events queue.
func TestIssuerWebhookAccepted(t *testing.T) {
	e := newIssuerHookEnv(t)
	status, body := e.post(t, issuerSigned(issuerTestNotification, issuerTestNow), issuerTestNotification)
	want := `{"success":true,"statusCode":202,"message":"Notification accepted","data":{"id":"evt_auth_0001"}}`
	if status != http.StatusAccepted || body != want {
		t.Fatalf("%d %s, want 202 %s", status, body, want)
	}
	if got := e.bodies(t); len(got) != 1 || got[0] != issuerTestNotification {
		t.Fatalf("queued %q, want exactly the raw body %q", got, issuerTestNotification)
	}
}

// TestIssuerWebhookRepeated: a repeated delivery is queued again; the
// card-worker applies a notification once per its id.
func TestIssuerWebhookRepeated(t *testing.T) {
	e := newIssuerHookEnv(t)
	for i := range 2 {
		if status, body := e.post(t, issuerSigned(issuerTestNotification, issuerTestNow), issuerTestNotification); status != http.StatusAccepted {
			t.Fatalf("delivery %d: %d %s", i+1, status, body)
		}
	}
	if got := e.bodies(t); len(got) != 2 || got[0] != issuerTestNotification || got[1] != issuerTestNotification {
		t.Fatalf("queued %q, want the notification twice", got)
	}
}

// TestIssuerWebhookTolerance: a signature made up to 300 s before or after
// the function's clock is accepted.
func TestIssuerWebhookTolerance(t *testing.T) {
	for _, skew := range []time.Duration{-300 * time.Second, 300 * time.Second} {
		t.Run(skew.String(), func(t *testing.T) {
			e := newIssuerHookEnv(t)
			if status, body := e.post(t, issuerSigned(issuerTestNotification, issuerTestNow.Add(skew)), issuerTestNotification); status != http.StatusAccepted {
				t.Fatalf("%d %s, want 202", status, body)
			}
			if n := e.queued(t); n != 1 {
				t.Fatalf("%d messages queued, want 1", n)
			}
		})
	}
}

// TestIssuerWebhookRefused: a request whose signature does not verify is 401
// INVALID_SIGNATURE; one whose signature verifies but whose body is not a
// notification is 400 naming what is wrong, and one too large 413. Nothing
// is queued.
func TestIssuerWebhookRefused(t *testing.T) {
	n := issuerTestNotification
	ts := strconv.FormatInt(issuerTestNow.Unix(), 10)
	tooLarge := `{"id":"evt_big","pad":"` + strings.Repeat("x", httpapi.MaxBodyBytes) + `"}`
	tests := []struct {
		name    string
		headers map[string]string
		body    string
		status  int
		code    string
		message string // a part of the message
	}{
		{"no signature", nil, n, 401, "INVALID_SIGNATURE", "X-Issuer-Signature"},
		{"empty signature", map[string]string{issuerhooks.Header: ""}, n, 401, "INVALID_SIGNATURE", ""},
		{"forged signature", map[string]string{issuerhooks.Header: "t=" + ts + ",v1=" + strings.Repeat("ab", 32)}, n, 401, "INVALID_SIGNATURE", ""},
		{"other secret", map[string]string{issuerhooks.Header: issuerhooks.Sign([]byte("not-the-issuer-secret-not-the-issuer-secret"), []byte(n), issuerTestNow)}, n, 401, "INVALID_SIGNATURE", ""},
		{"body changed", issuerSigned(n, issuerTestNow), strings.Replace(n, "1250", "125000", 1), 401, "INVALID_SIGNATURE", ""},
		{"timestamp changed", map[string]string{issuerhooks.Header: strings.Replace(issuerSigned(n, issuerTestNow)[issuerhooks.Header], "t="+ts, "t="+strconv.FormatInt(issuerTestNow.Unix()+1, 10), 1)}, n, 401, "INVALID_SIGNATURE", ""},
		{"malformed: no timestamp", map[string]string{issuerhooks.Header: strings.TrimPrefix(issuerSigned(n, issuerTestNow)[issuerhooks.Header], "t="+ts+",")}, n, 401, "INVALID_SIGNATURE", ""},
		{"malformed: not hex", map[string]string{issuerhooks.Header: "t=" + ts + ",v1=zz"}, n, 401, "INVALID_SIGNATURE", ""},
		{"malformed: garbage", map[string]string{issuerhooks.Header: "garbage"}, n, 401, "INVALID_SIGNATURE", ""},
		{"signature in another header", map[string]string{"X-Service-Signature": issuerSigned(n, issuerTestNow)[issuerhooks.Header]}, n, 401, "INVALID_SIGNATURE", ""},
		{"stale: 301 s old", issuerSigned(n, issuerTestNow.Add(-301*time.Second)), n, 401, "INVALID_SIGNATURE", ""},
		{"stale: a day old", issuerSigned(n, issuerTestNow.Add(-24*time.Hour)), n, 401, "INVALID_SIGNATURE", ""},
		{"future: 301 s ahead", issuerSigned(n, issuerTestNow.Add(301*time.Second)), n, 401, "INVALID_SIGNATURE", ""},
		{"signed, not JSON", issuerSigned("not json", issuerTestNow), "not json", 400, "INVALID_FIELD", "body: not an issuer notification: invalid character"},
		{"signed, empty", issuerSigned("", issuerTestNow), "", 400, "INVALID_FIELD", "body: not an issuer notification"},
		{"signed, no id", issuerSigned(strings.Replace(n, `"evt_auth_0001"`, `""`, 1), issuerTestNow), strings.Replace(n, `"evt_auth_0001"`, `""`, 1), 400, "INVALID_FIELD", "no id"},
		{"signed, unknown type", issuerSigned(strings.Replace(n, `"authorization.advice"`, `"capture"`, 1), issuerTestNow), strings.Replace(n, `"authorization.advice"`, `"capture"`, 1), 400, "INVALID_FIELD", `unknown type "capture"`},
		{"signed, too large", issuerSigned(tooLarge, issuerTestNow), tooLarge, 413, "BODY_TOO_LARGE", "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newIssuerHookEnv(t)
			status, body := e.post(t, tt.headers, tt.body)
			b := apptest.DecodeErrorBody(t, body)
			if status != tt.status || b.StatusCode != tt.status || b.Success || b.Code != tt.code || !strings.Contains(b.Message, tt.message) {
				t.Fatalf("%d %s, want %d %s with %q", status, body, tt.status, tt.code, tt.message)
			}
			if b.Error != http.StatusText(tt.status) {
				t.Errorf("error %q, want %q", b.Error, http.StatusText(tt.status))
			}
			if tt.status == http.StatusUnauthorized && b.Message != "missing, malformed, stale or forged X-Issuer-Signature" {
				t.Errorf("message %q: a 401 says the same whatever the cause", b.Message)
			}
			if n := e.queued(t); n != 0 {
				t.Fatalf("%d messages queued, want none", n)
			}
		})
	}
}

// TestIssuerWebhookQueueDown: when the notification cannot be queued the
// answer is a 500 that tells nothing of why, and the issuer sends it again.
func TestIssuerWebhookQueueDown(t *testing.T) {
	e := newIssuerHookEnv(t)
	if _, err := e.sqs.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(e.queue)}); err != nil {
		t.Fatal(err)
	}
	status, body := e.post(t, issuerSigned(issuerTestNotification, issuerTestNow), issuerTestNotification)
	want := `{"success":false,"statusCode":500,"message":"internal error","error":"Internal Server Error","code":"INTERNAL"}`
	if status != http.StatusInternalServerError || body != want {
		t.Fatalf("%d %s, want 500 %s", status, body, want)
	}
}

// TestIssuerWebhooksNeedASecret: the function does not start without the
// issuer's secret, or with a short one.
func TestIssuerWebhooksNeedASecret(t *testing.T) {
	for _, secret := range [][]byte{nil, []byte("short")} {
		_, err := issuerwebhooks.New(context.Background(), function.Config{IssuerWebhookSecret: secret, IssuerEventsQueueURL: "http://q/issuer-events"})
		if !errors.Is(err, function.ErrConfig) || !strings.Contains(err.Error(), "ISSUER_WEBHOOK_SECRET") {
			t.Errorf("secret %q: error %v, want function.ErrConfig naming ISSUER_WEBHOOK_SECRET", secret, err)
		}
	}
}
