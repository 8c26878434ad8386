package apptest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"payments/pkg/function"
	"payments/pkg/function/adminapi"
	"payments/pkg/function/cardworker"
	"payments/pkg/queue/queuetest"
	"payments/pkg/store/moneystore"
	"payments/pkg/waittest"
)

// ListsTestEnv is the cards environment with the card-network sandbox and
// a card-worker applying its notifications as they come, for the tests
// that fill every list of the API.
type ListsTestEnv struct {
	*CardsTestEnv
	Network function.HTTPHandler
	n       atomic.Int64 // identity numbers handed out
}

// NewListsTestEnv returns a ListsTestEnv over a fresh table and queues;
// its card-worker stops when the test ends.
func NewListsTestEnv(t *testing.T) *ListsTestEnv {
	t.Helper()
	e := &ListsTestEnv{CardsTestEnv: NewCardsTestEnv(t)}
	e.Cfg.IssuerEventsQueueURL = queuetest.NewQueue(t, e.Sqs, nil)
	e.Cfg.IssuerWebhookSecret = IssuerTestSecret
	e.Cards = e.CardsFunction(t, e.Cfg)
	e.Network = e.CardNetworkFunction(t, e.Cfg)
	ctx := context.Background()
	var err error
	if e.AuthTestEnv.Admin, err = adminapi.New(ctx, Recording(e.Cfg, "admin")); err != nil { // the console of this configuration
		t.Fatal(err)
	}
	worker, err := cardworker.New(ctx, Recording(e.Cfg, "card-worker"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { e.applyIssuerEvents(ctx, worker) })
	t.Cleanup(func() { stop(); wg.Wait() })
	return e
}

// applyIssuerEvents hands the issuer-events queue's messages to worker
// until ctx ends, deleting what it applied; what failed is seen again
// once visible.
func (e *ListsTestEnv) applyIssuerEvents(ctx context.Context, worker function.SQSHandler) {
	url := aws.String(e.Cfg.IssuerEventsQueueURL)
	for ctx.Err() == nil {
		out, err := e.Sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 2})
		if err != nil || len(out.Messages) == 0 {
			continue
		}
		var ev events.SQSEvent
		for _, m := range out.Messages {
			ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), Body: aws.ToString(m.Body), Attributes: m.Attributes})
		}
		resp, err := worker(ctx, ev)
		if err != nil {
			continue
		}
		failed := map[string]bool{}
		for _, f := range resp.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		for _, m := range out.Messages {
			if !failed[aws.ToString(m.MessageId)] {
				e.Sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: url, ReceiptHandle: m.ReceiptHandle})
			}
		}
	}
}

// EnrollCustomers enrols n verified customers of the company of token and
// returns their ids.
func (e *ListsTestEnv) EnrollCustomers(token string, n int) []string {
	e.T.Helper()
	var out []string
	for range n {
		id := fmt.Sprintf("LIST-%d", e.n.Add(1))
		r := e.Enroll(token, e.Identity(strings.ToLower(id)+"@example.com", id))
		if r.Status != 201 {
			e.T.Fatalf("enrol: %s", r.Raw)
		}
		out = append(out, r.Str("data", "id"))
	}
	return out
}

// CardWithPurchases gives the company of token a USD wallet funded with
// 100, a verified customer and a card of theirs holding 50, on which the
// card network makes n purchases of 1 USD, each authorized and settled
// through the sandbox routes. It returns the card, its customer and the
// purchases' settlements.
func (e *ListsTestEnv) CardWithPurchases(token string, n int) (cardID, customerID string, settlements []string) {
	e.T.Helper()
	r := e.Call(e.Wallets, token, "POST", "/wallets", `{"currency":"USD","country":"United States","country_iso_code":"US","country_phone_code":"+1"}`)
	if r.Status != 201 {
		e.T.Fatalf("USD wallet: %s", r.Raw)
	}
	if c := e.Admin("POST", "/admin/wallets/"+r.Str("data", "id")+"/credit", `{"balance":"payout","amount":100,"reference":"cards-opening"}`); c.Status != 200 {
		e.T.Fatalf("credit: %s", c.Raw)
	}
	customerID = e.EnrollCustomers(token, 1)[0]
	r = e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":50}`)
	if r.Status != 201 {
		e.T.Fatalf("issue: %s", r.Raw)
	}
	cardID = r.Str("data", "id")
	for range n {
		auth := e.Call(e.Network, token, "POST", "/sandbox/cards/"+cardID+"/authorizations",
			`{"amount":1,"merchant_name":"Book Shop","merchant_city":"Austin","merchant_country":"US"}`)
		if auth.Status != 201 || auth.Str("data", "type") != "AUTHORIZATION" {
			e.T.Fatalf("authorize: %s", auth.Raw)
		}
		st := e.Call(e.Network, token, "POST", "/sandbox/card-transactions/"+auth.Str("data", "id")+"/settle", "")
		if st.Status != 201 || st.Str("data", "type") != "SETTLEMENT" {
			e.T.Fatalf("settle: %s", st.Raw)
		}
		settlements = append(settlements, st.Str("data", "id"))
	}
	return cardID, customerID, settlements
}

// Dispute disputes each settlement at the issuer.
func (e *ListsTestEnv) Dispute(token string, settlements []string) {
	e.T.Helper()
	for _, id := range settlements {
		r := e.Call(e.Cards, token, "POST", "/cards/transactions/"+id+"/disputes", `{"reason":"not_received","explanation":"The books never came."}`)
		if r.Status != 201 {
			e.T.Fatalf("dispute: %s", r.Raw)
		}
	}
}

// Reveal reveals the card's secrets n times, each recorded in its
// reveals' audit.
func (e *ListsTestEnv) Reveal(token, cardID string, n int) {
	e.T.Helper()
	for range n {
		if r := e.Call(e.Cards, token, "GET", "/cards/"+cardID+"?reveal=true", ""); r.Status != 200 {
			e.T.Fatalf("reveal: %s", r.Raw)
		}
	}
}

// BulkPayouts submits n batches of the company of token, each paying 100
// XAF to items numbers, and runs the payout worker until the first
// batch's items are listed. It returns the batches' ids.
func (e *ListsTestEnv) BulkPayouts(token string, n, items int) []string {
	e.T.Helper()
	var ids []string
	for b := range n {
		rows := make([]string, items)
		for i := range rows {
			rows[i] = fmt.Sprintf(`{"operator":"mtn","country":"CM","phone_number":"23767%07d","amount":100,"currency":"XAF"}`, b*items+i+1)
		}
		r := e.Call(e.Payments, token, "POST", "/payment/payouts/bulk", `{"description":"lists","items":[`+strings.Join(rows, ",")+`]}`)
		if r.Status/100 != 2 {
			e.T.Fatalf("bulk: %s", r.Raw)
		}
		ids = append(ids, r.Str("data", "batch_id"))
	}
	e.Pump(60*time.Second, func() bool {
		r := e.Call(e.Payments, token, "GET", "/payment/payouts/bulk/"+ids[0]+"/items?limit=100", "")
		return r.Status == 200 && len(r.Items()) == items
	})
	return ids
}

// Reconcile runs the operator's reconciliation n times through the
// console, each run a report.
func (e *ListsTestEnv) Reconcile(n int) {
	e.T.Helper()
	for range n {
		if r := e.Admin("POST", "/admin/reconciliations", `{"provider":"operator"}`); r.Status != 201 {
			e.T.Fatalf("reconcile: %s", r.Raw)
		}
	}
}

// FlagForReconciliation flags the company's payments as needing
// reconciliation, as the payout worker does when it cannot tell their
// outcome, and waits until the console lists them all.
func (e *ListsTestEnv) FlagForReconciliation(companyID string, payments []string) {
	e.T.Helper()
	ctx := context.Background()
	st := moneystore.NewPayments(e.DB)
	for _, id := range payments {
		p, err := st.GetPayment(ctx, companyID, id)
		if err != nil {
			e.T.Fatal(err)
		}
		flagged := p
		flagged.ReconciliationRequired = true
		if err := st.Reschedule(ctx, flagged, p.NextPollAt); err != nil {
			e.T.Fatal(err)
		}
	}
	waittest.Until(e.T, 10*time.Second, "the console lists the flagged payments", func() bool {
		r := e.Admin("GET", "/admin/payments?reconciliation_required=true&limit=100", "")
		return r.Status == 200 && len(r.Items()) >= len(payments)
	})
}
