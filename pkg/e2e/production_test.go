package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"payments/pkg/app/apptest"
	"payments/pkg/function/operatorcallbacks"
	"payments/pkg/providers/operator/pawapay/pawapaysim"
)

// The tests of production mode run the payments function, the payout
// worker and the operator-callbacks function as production builds them,
// against the simulated pawaPay over HTTP (apptest.ProductionTestEnv).

// statusEvents returns the statuses the webhook events of payment id
// carried, in the order queued.
func statusEvents(e *apptest.ProductionTestEnv, id string) []string {
	var out []string
	for _, line := range strings.Split(e.WebhookEvents(), "\n") {
		if tx, status, ok := strings.Cut(line, " "); ok && tx == id {
			out = append(out, status)
		}
	}
	return out
}

// pumpUntil runs the payout worker until the payment's status is want.
func pumpUntil(e *apptest.ProductionTestEnv, token, id, want string, within time.Duration) {
	e.T.Helper()
	e.Pump(within, func() bool { return e.Status(token, id).Str("data", "status") == want })
}

// TestProductionPayments: a payout and a collection go through the
// aggregator's adapter to the simulated pawaPay; its signed callback
// settles them at once, before the worker's next poll is due. A payout
// that fails is refunded once. Each payment emits PENDING, PROCESSING and
// its final status once, and the ledger holds.
func TestProductionPayments(t *testing.T) {
	tests := []struct {
		name, route, phone, final string
		refunds                   int
		// the wallet's balances after, given the payment's fee
		payout, payin func(fee int) int
	}{
		{"payout succeeds", "/payment/payout", "237670000001", "SUCCESS", 0,
			func(fee int) int { return 10000 - 100 - fee }, func(int) int { return 0 }},
		{"payout fails and is refunded", "/payment/payout", "237670000000", "FAILED", 1,
			func(int) int { return 10000 }, func(int) int { return 0 }},
		{"collection succeeds", "/payment/collect", "237670000002", "SUCCESS", 0,
			func(int) int { return 10000 }, func(fee int) int { return 100 - fee }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := apptest.NewProductionTestEnv(t)
			companyID, token, walletID := e.Company("10000")
			r := e.Call(e.Payments, token, "POST", tt.route,
				`{"operator":"mtn","country":"CM","phone_number":"`+tt.phone+`","amount":100,"currency":"XAF"}`)
			if r.Status != 200 {
				t.Fatalf("%s: %d %s", tt.route, r.Status, r.Raw)
			}
			id := r.Str("data", "transaction_id")
			fee, err := strconv.Atoi(r.Str("data", "fee_amount"))
			if err != nil {
				t.Fatalf("fee_amount: %s", r.Raw)
			}
			pumpUntil(e, token, id, "PROCESSING", 20*time.Second)
			if err := e.Settle(); err != nil {
				t.Fatal(err)
			}
			if got := e.CallbackAnswers(); !slices.Equal(got, []int{200}) {
				t.Fatalf("callbacks answered %v, want [200]", got)
			}
			// The callback's update is on the queue now; the next poll is
			// due seconds later: the update settles the payment first.
			e.Deliver()
			st := e.Status(token, id)
			if st.Str("data", "status") != tt.final {
				t.Fatalf("after the callback: %s", st.Raw)
			}
			if want := map[string]string{"SUCCESS": "COMPLETED", "FAILED": "FAILED"}[tt.final]; !strings.Contains(st.Raw, `"status":"`+want+`"`) {
				t.Errorf("the upstream answer is not pawaPay's callback: %s", st.Raw)
			}
			if n := e.Refunds(token, id); n != tt.refunds {
				t.Errorf("%d refunds, want %d", n, tt.refunds)
			}
			w := e.Wallet(token, walletID)
			if got, want := fmt.Sprint(w["payout_balance"], " ", w["payin_balance"]), fmt.Sprint(tt.payout(fee), " ", tt.payin(fee)); got != want {
				t.Errorf("balances payout, payin: %s, want %s", got, want)
			}
			if got, want := statusEvents(e, id), []string{"PENDING", "PROCESSING", tt.final}; !slices.Equal(got, want) {
				t.Errorf("status events %v, want %v", got, want)
			}
			e.Verify(companyID)
		})
	}
}

// processingPayout sends a payout of 100 XAF to a number pawaPay pays and
// runs the worker until pawaPay has it (PROCESSING); it returns its id.
func processingPayout(e *apptest.ProductionTestEnv, token string) string {
	e.T.Helper()
	r := e.Call(e.Payments, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":100,"currency":"XAF"}`)
	if r.Status != 200 {
		e.T.Fatal(r.Raw)
	}
	id := r.Str("data", "transaction_id")
	pumpUntil(e, token, id, "PROCESSING", 20*time.Second)
	return id
}

// TestProductionLostCallback: a callback that never arrives is made up for
// by the worker's polls, and the same callback sent again afterwards (the
// poll came first) changes nothing.
func TestProductionLostCallback(t *testing.T) {
	e := apptest.NewProductionTestEnv(t)
	companyID, token, _ := e.Company("10000")
	id := processingPayout(e, token)
	e.DropCallbacks.Store(true)
	if err := e.Settle(); err == nil {
		t.Fatal("the dropped callback was delivered")
	}
	pumpUntil(e, token, id, "SUCCESS", 30*time.Second) // the next poll finds it
	e.DropCallbacks.Store(false)
	resend(t, e, "payouts", id)
	if got := e.CallbackAnswers(); !slices.Equal(got, []int{200}) {
		t.Fatalf("the late callback was answered %v", got)
	}
	e.Deliver()
	if got, want := statusEvents(e, id), []string{"PENDING", "PROCESSING", "SUCCESS"}; !slices.Equal(got, want) {
		t.Errorf("status events %v, want %v", got, want)
	}
	e.Verify(companyID)
}

// resend asks the simulated pawaPay to send the callback of a final
// payment again (its resend-callback endpoint).
func resend(t *testing.T, e *apptest.ProductionTestEnv, kind, id string) {
	t.Helper()
	req := httptest.NewRequest("POST", "/v2/"+kind+"/resend-callback/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+apptest.OperatorTestToken)
	w := httptest.NewRecorder()
	e.Sim.ServeHTTP(w, req)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "ACCEPTED") {
		t.Fatalf("resend-callback: %d %s", w.Code, w.Body)
	}
}

// TestProductionForgedAndStaleCallbacks: a callback signed with another
// key, or checked too long after it was signed, is answered 401 and
// queues nothing; the payment stays PROCESSING until the real callback.
func TestProductionForgedAndStaleCallbacks(t *testing.T) {
	e := apptest.NewProductionTestEnv(t)
	companyID, token, _ := e.Company("10000")
	id := processingPayout(e, token)

	// A forger: its own pawaPay, its own key, our transaction id.
	forger, err := pawapaysim.New(pawapaysim.Config{Token: "forger", CallbackURL: e.CallbackURL, Delay: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/v2/payouts", strings.NewReader(`{"payoutId":"`+id+`","amount":"100","currency":"XAF",`+
		`"recipient":{"type":"MMO","accountDetails":{"phoneNumber":"237670000001","provider":"MTN_MOMO_CMR"}},"metadata":[{"companyId":"`+companyID+`"}]}`))
	req.Header.Set("Authorization", "Bearer forger")
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	forger.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Fatalf("the forger's payout: %d %s", w.Code, w.Body)
	}
	if err := forger.Settle(context.Background()); err == nil {
		t.Fatal("the forged callback was accepted")
	}

	// The real callback, checked ten minutes after it was signed.
	stale, err := operatorcallbacks.NewWithClock(e.Cfg, func() time.Time { return e.Clock.Now().Add(10 * time.Minute) })
	if err != nil {
		t.Fatal(err)
	}
	real := e.Callbacks
	e.Callbacks = stale
	if err := e.Settle(); err == nil {
		t.Fatal("the stale callback was accepted")
	}
	if got := e.CallbackAnswers(); !slices.Equal(got, []int{401, 401}) {
		t.Fatalf("forged and stale callbacks answered %v, want [401 401]", got)
	}
	if n := queuedUpdates(t, e); n != 0 {
		t.Fatalf("refused callbacks queued %d updates", n)
	}
	if st := e.Status(token, id); st.Str("data", "status") != "PROCESSING" {
		t.Fatalf("a refused callback changed the payment: %s", st.Raw)
	}

	e.Callbacks = real
	resend(t, e, "payouts", id)
	e.Deliver()
	if st := e.Status(token, id); st.Str("data", "status") != "SUCCESS" {
		t.Fatalf("after the real callback: %s", st.Raw)
	}
	e.Verify(companyID)
}

// queuedUpdates counts the operator updates waiting on the payouts queue,
// leaving every message there.
func queuedUpdates(t *testing.T, e *apptest.ProductionTestEnv) int {
	t.Helper()
	out, err := e.Sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(e.Payouts), MaxNumberOfMessages: 10, VisibilityTimeout: 0,
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range out.Messages {
		if strings.Contains(aws.ToString(m.Body), `"update"`) {
			n++
		}
	}
	return n
}

// TestProductionAggregatorUnavailable: while pawaPay answers 503 the
// payout stays PENDING with its money reserved (never failed, never
// refunded), pawaPay holds nothing, and the next submission, once pawaPay
// answers again, goes through.
func TestProductionAggregatorUnavailable(t *testing.T) {
	e := apptest.NewProductionTestEnv(t)
	companyID, token, walletID := e.Company("10000")
	e.Sim.FailNext(http.StatusServiceUnavailable, "", 3) // every attempt of the first submission
	r := e.Call(e.Payments, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":100,"currency":"XAF"}`)
	if r.Status != 200 {
		t.Fatal(r.Raw)
	}
	id := r.Str("data", "transaction_id")
	e.Deliver()
	if st := e.Status(token, id); st.Str("data", "status") != "PENDING" {
		t.Fatalf("after a submission pawaPay refused with 503: %s", st.Raw)
	}
	if n := e.Sim.Held("payout"); n != 0 {
		t.Fatalf("pawaPay holds %d payouts", n)
	}
	w := e.Wallet(token, walletID)
	if fmt.Sprint(w["payout_balance"], " ", w["payout_reserved"]) != "10000 "+sum(100, r.Str("data", "fee_amount")) {
		t.Fatalf("balances while pawaPay is down: %v %v", w["payout_balance"], w["payout_reserved"])
	}
	pumpUntil(e, token, id, "PROCESSING", 20*time.Second)
	if err := e.Settle(); err != nil {
		t.Fatal(err)
	}
	e.Deliver()
	if st := e.Status(token, id); st.Str("data", "status") != "SUCCESS" {
		t.Fatalf("once pawaPay answers: %s", st.Raw)
	}
	e.Verify(companyID)
}

// sum returns a plus the whole number b, as text.
func sum(a int, b string) string {
	n, err := strconv.Atoi(b)
	if err != nil {
		return "not whole: " + b
	}
	return strconv.Itoa(a + n)
}
