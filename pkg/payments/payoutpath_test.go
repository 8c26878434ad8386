package payments_test

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"payments/pkg/app/apptest"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/paymentsapi"
	"payments/pkg/function/payoutworker"
	"payments/pkg/outbox"
	"payments/pkg/store"
)

// TestAcceptedPayoutRequests counts the AWS requests of an accepted payout
// through the payments function's handler (docs/publication.md): at most one
// read, the company's money limit (one UpdateItem: its bucket is full
// again, the test's limits being generous), one TransactWriteItems, one
// SQS send and the API key's activity record (one PutItem, after the
// answer is decided: companyroutes.Recorded) once the function is warm, and
// nothing else; any other request fails the test. The first payout of a
// company in a fresh instance (cold: its company, its fee schedule and its
// wallet's id not yet read) is counted too, and a warm collection, which
// travels the same path. Publication is the payout worker's: after it ran,
// no event of the payments is left unpublished.
func TestAcceptedPayoutRequests(t *testing.T) {
	t.Parallel()
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, _ := e.Company("100000")
	counter := &apptest.RequestCounter{}
	// A fresh instance: empty caches of its own, on a clock that stands
	// still, so that the warm steps find what the cold one read however
	// slowly the machine runs them (a read is trusted for cache.Staleness).
	now := time.Now()
	h, err := paymentsapi.NewWith(context.Background(), counter.Counting(apptest.Recording(e.Cfg, "payments")),
		base.NewCaches(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	payout := `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":1000,"currency":"XAF"}`
	steps := []struct {
		name, route, body string
		want              map[string]int
	}{
		{"cold: the company, the fee schedule, the wallet's id, the wallet", "/payment/payout", payout, map[string]int{
			"GetItem TABLE_NAME": 4, "UpdateItem TABLE_NAME": 1, "TransactWriteItems TABLE_NAME": 1, "SendMessage PAYOUTS_QUEUE_URL": 1, "PutItem TABLE_NAME": 1,
		}},
		{"warm: the wallet alone", "/payment/payout", payout, map[string]int{
			"GetItem TABLE_NAME": 1, "UpdateItem TABLE_NAME": 1, "TransactWriteItems TABLE_NAME": 1, "SendMessage PAYOUTS_QUEUE_URL": 1, "PutItem TABLE_NAME": 1,
		}},
		{"warm again", "/payment/payout", payout, map[string]int{
			"GetItem TABLE_NAME": 1, "UpdateItem TABLE_NAME": 1, "TransactWriteItems TABLE_NAME": 1, "SendMessage PAYOUTS_QUEUE_URL": 1, "PutItem TABLE_NAME": 1,
		}},
		{"a collection, warm: the same", "/payment/collect", `{"operator":"orange","country":"CM","phone_number":"237690000002","amount":1000,"currency":"XAF"}`, map[string]int{
			"GetItem TABLE_NAME": 1, "UpdateItem TABLE_NAME": 1, "TransactWriteItems TABLE_NAME": 1, "SendMessage PAYOUTS_QUEUE_URL": 1, "PutItem TABLE_NAME": 1,
		}},
	}
	var ids []string
	for _, s := range steps {
		counter.Take()
		r := e.Call(h, token, "POST", s.route, s.body)
		if r.Status != 200 {
			t.Fatalf("%s: %s", s.name, r.Raw)
		}
		ids = append(ids, r.Str("data", "transaction_id"))
		got, attempts := counter.Take()
		if !maps.Equal(got, s.want) || attempts != apptest.Total(s.want) {
			t.Fatalf("%s: requests %v in %d attempts, want %v in %d", s.name, got, attempts, s.want, apptest.Total(s.want))
		}
	}
	// What the payments function sent is the payouts' only message each:
	// the worker publishes their acceptance events and submits them.
	e.Pump(30*time.Second, func() bool {
		for _, id := range ids {
			if e.Status(token, id).Str("data", "status") != "SUCCESS" {
				return false
			}
		}
		return true
	})
	if left, err := store.NewOutbox(e.DB).Unpublished(context.Background(), time.Now().Add(time.Hour), 10); err != nil || len(left) != 0 {
		t.Fatalf("unpublished events %v %v", left, err)
	}
	published := e.WebhookEvents()
	for _, id := range ids {
		if n := strings.Count(published, id); n != 3 {
			t.Fatalf("payment %s: %d of its events reached the webhooks queue, want PENDING, PROCESSING, SUCCESS", id, n)
		}
	}
	e.Verify(companyID)
}

// TestPayoutEventsSurviveLostMessages: nothing committed is lost between the
// commit and the delivery when the one message of an acceptance is never
// sent, or when the worker cannot publish what the message carries: the
// sweeper publishes the acceptance's event after outbox.Grace, and resumes
// the payment.
func TestPayoutEventsSurviveLostMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// broken returns the payments function and the payout worker of
		// the fault.
		broken func(e *apptest.PaymentsTestEnv) (function.HTTPHandler, function.SQSHandler)
		// submits is whether the broken worker gets the message, and so
		// submits the payout without publishing its event.
		submits bool
	}{
		{"the payments function dies before sending", func(e *apptest.PaymentsTestEnv) (function.HTTPHandler, function.SQSHandler) {
			cfg := e.Cfg
			cfg.PayoutsQueueURL = "" // every send fails
			h, err := paymentsapi.New(context.Background(), cfg)
			if err != nil {
				e.T.Fatal(err)
			}
			return h, e.Worker
		}, false},
		{"the worker cannot publish", func(e *apptest.PaymentsTestEnv) (function.HTTPHandler, function.SQSHandler) {
			cfg := e.Cfg
			cfg.WebhooksQueueURL = "" // every publication fails
			w, err := payoutworker.New(context.Background(), cfg)
			if err != nil {
				e.T.Fatal(err)
			}
			return e.Payments, w
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := apptest.NewPaymentsTestEnv(t)
			companyID, token, _ := e.Company("10000")
			payments, worker := tt.broken(e)
			r := e.Call(payments, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":1000,"currency":"XAF"}`)
			if r.Status != 200 {
				t.Fatalf("payout: %s", r.Raw)
			}
			id := r.Str("data", "transaction_id")
			healthy := e.Worker
			e.Worker = worker
			if tt.submits { // the broken worker took the message and submitted
				e.Pump(30*time.Second, func() bool { return e.Status(token, id).Str("data", "status") != "PENDING" })
			} else {
				for range 3 {
					e.Deliver()
				}
			}
			e.Worker = healthy
			if got := e.WebhookEvents(); strings.Contains(got, id+" PENDING") {
				t.Fatalf("the fault did not keep the acceptance's event from the webhooks queue: %q", got)
			}
			sweep := apptest.MustSweeper(t, apptest.Recording(e.Cfg, "sweeper"), func() time.Time { return time.Now().Add(outbox.Grace + 2*time.Second) })
			if _, err := sweep(context.Background(), lambdaevents.EventBridgeEvent{}); err != nil {
				t.Fatal(err)
			}
			e.Pump(30*time.Second, func() bool { return e.Status(token, id).Str("data", "status") == "SUCCESS" })
			if got := e.WebhookEvents(); !strings.Contains(got, id+" PENDING") {
				t.Fatalf("the acceptance's event was never published: %q", got)
			}
			if left, err := store.NewOutbox(e.DB).Unpublished(context.Background(), time.Now().Add(time.Hour), 10); err != nil || len(left) != 0 {
				t.Fatalf("unpublished events %v %v", left, err)
			}
			e.Verify(companyID)
		})
	}
}
