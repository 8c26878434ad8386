package apptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/uuid"

	"payments/pkg/apidoc/apitest"
	"payments/pkg/function"
	"payments/pkg/function/adminapi"
	"payments/pkg/function/base"
	"payments/pkg/function/paymentsapi"
	"payments/pkg/function/payoutworker"
	"payments/pkg/function/sweeper"
	"payments/pkg/function/walletsapi"
	"payments/pkg/httpapi"
	"payments/pkg/outbox"
	"payments/pkg/queue/queuetest"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/waittest"
	"payments/pkg/wallets"
)

// PaymentsTestEnv is one table and real emulator queues with every function
// of this issue built by its production constructor: wallets, payments,
// admin, payout-worker and sweeper.
type PaymentsTestEnv struct {
	*AuthTestEnv
	T        *testing.T
	Sqs      *sqs.Client
	Payouts  string // payouts queue URL
	Bulk     string // bulk payouts queue URL
	Webhooks string // webhooks queue URL
	Wallets  function.HTTPHandler
	Payments function.HTTPHandler
	Worker   function.SQSHandler
}

// NewPaymentsTestEnv returns a PaymentsTestEnv over a fresh table and
// queues, each function recording its AWS calls (Recording).
func NewPaymentsTestEnv(t *testing.T) *PaymentsTestEnv {
	t.Helper()
	return newPaymentsTestEnv(t, function.ModeSandbox, nil)
}

// newPaymentsTestEnv is NewPaymentsTestEnv in mode, its configuration
// completed by configure (when not nil) before the functions are built.
func newPaymentsTestEnv(t *testing.T, mode string, configure func(*function.Config)) *PaymentsTestEnv {
	t.Helper()
	e := &PaymentsTestEnv{AuthTestEnv: newAuthTestEnv(t, mode), T: t, Sqs: queuetest.Client(t)}
	e.Payouts = queuetest.NewQueue(t, e.Sqs, nil)
	e.Bulk = queuetest.NewQueue(t, e.Sqs, nil)
	e.Webhooks = queuetest.NewQueue(t, e.Sqs, nil)
	e.Cfg.PayoutsQueueURL, e.Cfg.BulkPayoutsQueueURL, e.Cfg.WebhooksQueueURL = e.Payouts, e.Bulk, e.Webhooks
	e.Cfg.SQSEndpoint = os.Getenv("AWS_ENDPOINT_URL_SQS")
	if configure != nil {
		configure(&e.Cfg)
	}
	ctx := context.Background()
	var err error
	if e.Wallets, err = walletsapi.NewWith(ctx, Recording(e.Cfg, "wallets"), e.Caches); err != nil {
		t.Fatal(err)
	}
	if e.Payments, err = paymentsapi.NewWith(ctx, Recording(e.Cfg, "payments"), e.Caches); err != nil {
		t.Fatal(err)
	}
	if e.Worker, err = payoutworker.NewWithClock(Recording(e.Cfg, "payout-worker"), e.Caches, time.Now); err != nil {
		t.Fatal(err)
	}
	if e.AuthTestEnv.Admin, err = adminapi.NewWith(ctx, Recording(e.Cfg, "admin"), e.Caches, time.Now); err != nil { // with the queue
		t.Fatal(err)
	}
	return e
}

// Result is a decoded response.
type Result struct {
	Status  int
	Body    map[string]any
	Raw     string
	Headers map[string]string
}

// Data returns the response's data object (nil when it is not one).
func (r Result) Data() map[string]any { d, _ := r.Body["data"].(map[string]any); return d }

// Items returns the response's data list (nil when it is not one).
func (r Result) Items() []any { d, _ := r.Body["data"].([]any); return d }

// Str returns the value at path as text (numbers exactly as sent).
func (r Result) Str(path ...string) string {
	var v any = r.Body
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case nil:
		return "<nil>"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Call sends one request to h as API Gateway would; target may carry a
// query string; headers may carry the admin key. The answer must be JSON.
func (e *PaymentsTestEnv) Call(h function.HTTPHandler, token, method, target, body string, headers ...string) Result {
	e.T.Helper()
	resp := e.Send(h, token, method, target, body, headers...)
	r := Result{Status: resp.StatusCode, Raw: resp.Body, Headers: resp.Headers}
	dec := json.NewDecoder(strings.NewReader(resp.Body))
	dec.UseNumber()
	if err := dec.Decode(&r.Body); err != nil {
		e.T.Fatalf("%s %s: body %q: %v", method, target, resp.Body, err)
	}
	return r
}

// CallWithin is Call of a function whose invocation lasts timeout, as
// Lambda runs it: its context's deadline is timeout away, and an answer
// not given by then is the platform's time-out, which fails the test (the
// client would not know what the request committed).
func (e *PaymentsTestEnv) CallWithin(timeout time.Duration, h function.HTTPHandler, token, method, target, body string, headers ...string) Result {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	type answer struct {
		resp events.APIGatewayV2HTTPResponse
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := e.send(ctx, h, token, method, target, body, headers...)
		answered <- answer{resp, err}
	}()
	var a answer
	select {
	case a = <-answered:
	case <-ctx.Done():
		a = <-answered // what it answered past its time, which no client sees
		e.T.Fatalf("%s %s: not answered within the function's %v: the platform answers its time-out (late answer %d %s)",
			method, target, timeout, a.resp.StatusCode, a.resp.Body)
	}
	if a.err != nil {
		e.T.Fatalf("%s %s: %v", method, target, a.err)
	}
	r := Result{Status: a.resp.StatusCode, Raw: a.resp.Body, Headers: a.resp.Headers}
	dec := json.NewDecoder(strings.NewReader(a.resp.Body))
	dec.UseNumber()
	if err := dec.Decode(&r.Body); err != nil {
		e.T.Fatalf("%s %s: body %q: %v", method, target, a.resp.Body, err)
	}
	return r
}

// Send is Call for an answer of any type, returned as Lambda gives it;
// a header "content-type" in headers replaces the JSON one.
func (e *PaymentsTestEnv) Send(h function.HTTPHandler, token, method, target, body string, headers ...string) events.APIGatewayV2HTTPResponse {
	e.T.Helper()
	resp, err := e.send(context.Background(), h, token, method, target, body, headers...)
	if err != nil {
		e.T.Fatalf("%s %s: %v", method, target, err)
	}
	return resp
}

// send is Send under ctx, the function's error returned.
func (e *PaymentsTestEnv) send(ctx context.Context, h function.HTTPHandler, token, method, target, body string, headers ...string) (events.APIGatewayV2HTTPResponse, error) {
	e.T.Helper()
	u, err := url.Parse(target)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	path := httpapi.BasePath + u.Path
	req := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: method + " " + path, RawPath: path, RawQueryString: u.RawQuery,
		Headers: map[string]string{"content-type": "application/json"}, Body: body,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			Stage: "$default", RequestID: uuid.NewString(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "198.51.100.9"},
		},
	}
	if token != "" {
		req.Headers["authorization"] = "Bearer " + token
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Headers[strings.ToLower(headers[i])] = headers[i+1]
	}
	resp, err := h(ctx, req)
	if err != nil {
		return resp, err
	}
	apitest.CheckEvent(e.T, req, resp, true)
	return resp, nil
}

// Admin sends one request to the admin function with the admin key.
func (e *PaymentsTestEnv) Admin(method, target, body string) Result {
	e.T.Helper()
	return e.Call(e.AuthTestEnv.Admin, "", method, target, body, adminapi.KeyHeader, AuthTestAdminKey)
}

// Company creates an APPROVED company with an XAF/CM wallet whose payout
// balance is funded with payout (major units, "" for none) and returns its
// id, a token and the wallet id.
func (e *PaymentsTestEnv) Company(payout string) (id, token, walletID string) {
	e.T.Helper()
	id, clientID, key := e.CreateCompany(e.T, "Acme "+uuid.NewString()[:6])
	if r := e.Admin("PATCH", "/admin/companies/"+id, `{"kyb_status":"APPROVED"}`); r.Status != 200 {
		e.T.Fatalf("approve: %s", r.Raw)
	}
	token = e.MustToken(e.T, clientID, key)
	r := e.Call(e.Wallets, token, "POST", "/wallets", `{"currency":"XAF","country":"Cameroon","country_iso_code":"CM","country_phone_code":"+237"}`)
	if r.Status != 201 {
		e.T.Fatalf("create wallet: %s", r.Raw)
	}
	walletID = r.Str("data", "id")
	if payout != "" {
		if r := e.Admin("POST", "/admin/wallets/"+walletID+"/credit", `{"balance":"payout","amount":`+payout+`,"reference":"opening"}`); r.Status != 200 {
			e.T.Fatalf("credit: %s", r.Raw)
		}
	}
	return id, token, walletID
}

// Wallet reads the wallet through GET /wallets.
func (e *PaymentsTestEnv) Wallet(token, id string) map[string]any {
	e.T.Helper()
	r := e.Call(e.Wallets, token, "GET", "/wallets", "")
	for _, it := range r.Items() {
		if w := it.(map[string]any); w["id"] == id {
			return w
		}
	}
	e.T.Fatalf("wallet %s not listed: %s", id, r.Raw)
	return nil
}

// Pump plays Lambda's event source mappings for the payout worker: it
// receives batches from the payouts queue and the bulk payouts queue,
// invokes the worker's handler with them and deletes the messages it did
// not report, until done() holds or the time runs out.
func (e *PaymentsTestEnv) Pump(timeout time.Duration, done func() bool) {
	e.T.Helper()
	waittest.Until(e.T, timeout, "the payout worker is done", func() bool {
		if done() {
			return true
		}
		e.Deliver()
		return false
	})
}

// Deliver receives one batch from the payouts queue and one from the bulk
// payouts queue, if any, hands each to the worker and deletes the messages
// it did not report failed.
func (e *PaymentsTestEnv) Deliver() {
	e.T.Helper()
	e.DeliverFrom(e.Payouts)
	e.DeliverFrom(e.Bulk)
}

// DeliverFrom receives one batch (up to 10 messages, oldest first in the
// emulator) from the queue at url, if any, hands it to the worker as that
// queue's event source mapping would and deletes the messages it did not
// report failed. It returns how many messages it delivered.
func (e *PaymentsTestEnv) DeliverFrom(url string) int {
	e.T.Helper()
	ctx := context.Background()
	out, err := e.Sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 30,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
	})
	if err != nil {
		e.T.Fatal(err)
	}
	if len(out.Messages) == 0 {
		return 0
	}
	var ev events.SQSEvent
	for _, m := range out.Messages {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Body: aws.ToString(m.Body), Attributes: m.Attributes, EventSource: "aws:sqs",
		})
	}
	resp, err := e.Worker(ctx, ev)
	if err != nil {
		e.T.Fatal(err)
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	for _, m := range out.Messages {
		if !failed[aws.ToString(m.MessageId)] {
			e.Sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle})
		}
	}
	return len(out.Messages)
}

// Refunds counts the REFUND ledger entries of payment id.
func (e *PaymentsTestEnv) Refunds(token, id string) int {
	e.T.Helper()
	n := 0
	for _, it := range e.Call(e.Wallets, token, "GET", "/wallet/transactions?type=REFUND", "").Items() {
		if it.(map[string]any)["payment_id"] == id {
			n++
		}
	}
	return n
}

// Status reads a payment's status.
func (e *PaymentsTestEnv) Status(token, id string) Result {
	e.T.Helper()
	return e.Call(e.Payments, token, "GET", "/payment/transactions/"+id+"/status?includeUpstreamResponse=true", "")
}

// Verify fails the test unless the ledger invariant holds for every
// wallet of companyID (wallets.VerifyLedger).
func (e *PaymentsTestEnv) Verify(companyID string) {
	e.T.Helper()
	if err := wallets.VerifyLedger(context.Background(), moneystore.NewWallets(e.DB), companyID); err != nil {
		e.T.Fatalf("ledger invariant: %v", err)
	}
}

// PayoutCount returns how many payments the company has.
func (e *PaymentsTestEnv) PayoutCount(token string) string {
	e.T.Helper()
	return e.Call(e.Payments, token, "GET", "/payment/transactions", "").Str("meta", "total")
}

// WebhookEvents drains the webhooks queue and returns the status-update
// events it named, one "<transaction id> <status>" a line.
func (e *PaymentsTestEnv) WebhookEvents() string {
	e.T.Helper()
	ctx := context.Background()
	st := store.NewOutbox(e.DB)
	var b strings.Builder
	for {
		out, err := e.Sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(e.Webhooks), MaxNumberOfMessages: 10})
		if err != nil {
			e.T.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return b.String()
		}
		for _, m := range out.Messages {
			var msg outbox.Message
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &msg); err != nil {
				e.T.Fatal(err)
			}
			ev, err := st.Event(ctx, msg.CompanyID, msg.EventID)
			if err != nil {
				e.T.Fatal(err)
			}
			var body struct {
				Data struct {
					TransactionID string `json:"transaction_id"`
					Status        string `json:"status"`
				} `json:"data"`
			}
			json.Unmarshal(ev.Body, &body)
			fmt.Fprintf(&b, "%s %s\n", body.Data.TransactionID, body.Data.Status)
			e.Sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(e.Webhooks), ReceiptHandle: m.ReceiptHandle})
		}
	}
}

// MustSweeper builds the sweeper on cfg and the clock now, over caches of
// its own.
func MustSweeper(t *testing.T, cfg function.Config, now func() time.Time) function.ScheduleHandler {
	t.Helper()
	h, err := sweeper.NewWithClock(cfg, base.NewCaches(time.Now), now)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
