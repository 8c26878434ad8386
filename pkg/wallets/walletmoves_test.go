package wallets_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/uuid"

	"payments/pkg/app/apptest"
	evs "payments/pkg/events"
	"payments/pkg/function"
	"payments/pkg/function/fundworker"
	"payments/pkg/function/walletsapi"
	"payments/pkg/page"
	"payments/pkg/providers/bank/banksandbox"
	"payments/pkg/queue/queuetest"
	"payments/pkg/store"
	"payments/pkg/store/schema"
	"payments/pkg/waittest"
	"payments/pkg/webhooks"
)

// movesTestEnv is apptest.PaymentsTestEnv with the funds queue: the wallets
// function declares fundings on it (the sandbox bank), the fund-worker
// consumes it.
type movesTestEnv struct {
	*apptest.PaymentsTestEnv
	funds      string // funds queue URL
	fundWorker function.SQSHandler
}

func newMovesTestEnv(t *testing.T) *movesTestEnv {
	t.Helper()
	e := &movesTestEnv{PaymentsTestEnv: apptest.NewPaymentsTestEnv(t)}
	e.funds = queuetest.NewQueue(t, e.Sqs, nil)
	e.Cfg.FundsQueueURL = e.funds
	ctx := context.Background()
	var err error
	if e.Wallets, err = walletsapi.New(ctx, apptest.Recording(e.Cfg, "wallets")); err != nil {
		t.Fatal(err)
	}
	if e.fundWorker, err = fundworker.New(ctx, apptest.Recording(e.Cfg, "fund-worker")); err != nil {
		t.Fatal(err)
	}
	return e
}

// credit funds sub-balance b of a wallet from the console.
func (e *movesTestEnv) credit(walletID, b, amount string) {
	e.T.Helper()
	if r := e.Admin("POST", "/admin/wallets/"+walletID+"/credit",
		fmt.Sprintf(`{"balance":%q,"amount":%s,"reference":%q}`, b, amount, uuid.NewString())); r.Status != 200 {
		e.T.Fatalf("credit: %s", r.Raw)
	}
}

// Balances returns the wallet's payin, payout and payout_available.
func (e *movesTestEnv) balances(token, walletID string) string {
	e.T.Helper()
	w := e.Wallet(token, walletID)
	return fmt.Sprintf("%v/%v/%v", w["payin_balance"], w["payout_balance"], w["payout_available"])
}

// events returns the company's outbox events of kind, newest first.
func (e *movesTestEnv) events(companyID string, kind evs.Kind) []evs.Event {
	e.T.Helper()
	res, err := store.NewWebhooks(e.DB).Records(context.Background(), companyID, webhooks.Query{Kind: kind}, page.Request{Page: 1, Limit: 100})
	if err != nil {
		e.T.Fatal(err)
	}
	var out []evs.Event
	for _, r := range res.Items {
		out = append(out, r.Event)
	}
	return out
}

// deactivate turns the wallet's is_active off, as an operator would.
func (e *movesTestEnv) deactivate(companyID, walletID string) {
	e.T.Helper()
	if _, err := e.DB.Client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(e.DB.Table),
		Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: schema.CompanyPK(companyID)}, "SK": &types.AttributeValueMemberS{Value: schema.WalletSK(walletID)},
		},
		UpdateExpression:          aws.String("SET is_active = :f"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":f": &types.AttributeValueMemberBOOL{Value: false}},
	}); err != nil {
		e.T.Fatal(err)
	}
}

// fundMessage hands the fund-worker one message naming a funding, as the
// sandbox bank queues it, and returns its batch item failures.
func (e *movesTestEnv) fundMessage(body string) int {
	e.T.Helper()
	resp, err := e.fundWorker(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: uuid.NewString(), Body: body, EventSource: "aws:sqs"},
	}})
	if err != nil {
		e.T.Fatal(err)
	}
	return len(resp.BatchItemFailures)
}

// pumpFunds plays Lambda's event source mapping for the fund-worker: it
// receives what the funds queue makes visible, hands it to the worker and
// deletes what it handled, until done() holds.
func (e *movesTestEnv) pumpFunds(timeout time.Duration, done func() bool) {
	e.T.Helper()
	ctx := context.Background()
	waittest.Until(e.T, timeout, "the fund-worker is done", func() bool {
		if done() {
			return true
		}
		out, err := e.Sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(e.funds), MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 30,
		})
		if err != nil {
			e.T.Fatal(err)
		}
		for _, m := range out.Messages {
			if n := e.fundMessage(aws.ToString(m.Body)); n == 0 {
				e.Sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(e.funds), ReceiptHandle: m.ReceiptHandle})
			}
		}
		return false
	})
}

// TestTransferInternal moves money between the sub-balances of an XAF
// wallet with a 1 % TRANSFER fee: both directions, the ledger entries
// linked by the transfer id, the event; then every refusal.
func TestTransferInternal(t *testing.T) {
	t.Parallel()
	e := newMovesTestEnv(t)
	companyID, token, walletID := e.Company("")
	_, otherToken, otherWallet := e.Company("100")
	e.credit(walletID, "payin", "10000")
	if r := e.Admin("PUT", "/admin/companies/"+companyID+"/fees", `{"rules":[{"type":"TRANSFER","percent":1}]}`); r.Status != 200 {
		t.Fatalf("fees: %s", r.Raw)
	}
	target := "/wallets/" + walletID + "/transfer-internal"

	r := e.Call(e.Wallets, token, "POST", target, `{"amount":5000}`)
	if r.Status != 200 || r.Str("data", "amount") != "5000" || r.Str("data", "fee_amount") != "50" ||
		r.Str("data", "from") != "payin" || r.Str("data", "to") != "payout" || r.Str("data", "wallet_id") != walletID ||
		r.Str("data", "wallet", "payin_balance") != "4950" || r.Str("data", "wallet", "payout_balance") != "5000" ||
		r.Str("data", "wallet", "balance") != "9950" {
		t.Fatalf("transfer: %d %s", r.Status, r.Raw)
	}
	transferID := r.Str("data", "transfer_id")
	if got := e.balances(token, walletID); got != "4950/5000/5000" {
		t.Errorf("GET /wallets: payin/payout/available %s", got)
	}
	// The entries: the debit, the fee and the credit, each with its
	// balances before and after and the transfer as reference.
	want := map[string]string{
		"TRANSFER payin":  "5000 10000→5000",
		"FEE payin":       "50 5000→4950",
		"TRANSFER payout": "5000 0→5000",
	}
	for _, it := range e.Call(e.Wallets, token, "GET", "/wallet/transactions?wallet_id="+walletID, "").Items() {
		m := it.(map[string]any)
		if m["reference"] != transferID {
			continue
		}
		key := fmt.Sprintf("%v %v", m["type"], m["balance"])
		got := fmt.Sprintf("%v %v→%v", m["amount"], m["wallet_balance_before"], m["wallet_balance_after"])
		if want[key] != got || m["status"] != "SUCCESS" {
			t.Errorf("entry %s: %s %v, want %s", key, got, m["status"], want[key])
		}
		delete(want, key)
	}
	if len(want) != 0 {
		t.Errorf("entries missing: %v", want)
	}
	sent := e.events(companyID, evs.WalletTransferCompleted)
	if len(sent) != 1 || !strings.Contains(string(sent[0].Body), `"transfer_id":"`+transferID+`"`) ||
		!strings.Contains(string(sent[0].Body), `"fee_amount":50,"from":"payin","to":"payout"`) {
		t.Errorf("events %+v", sent)
	}

	// Back to payin: the fee comes from payout.
	r = e.Call(e.Wallets, token, "POST", target, `{"amount":1000,"from":"payout","to":"payin"}`)
	if r.Status != 200 || r.Str("data", "fee_amount") != "10" || r.Str("data", "wallet", "payout_balance") != "3990" ||
		r.Str("data", "wallet", "payin_balance") != "5950" {
		t.Fatalf("transfer back: %d %s", r.Status, r.Raw)
	}
	// 2000 of payout reserved by a payout (and its 30 fee): only
	// payout_available (3990 − 2030 = 1960) can move.
	if p := e.Call(e.Payments, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":2000,"currency":"XAF"}`); p.Status != 200 {
		t.Fatalf("payout: %s", p.Raw)
	}
	if got := e.balances(token, walletID); got != "5950/3990/1960" {
		t.Fatalf("after the payout: %s", got)
	}

	inactiveCompany, inactiveToken, inactiveWallet := e.Company("100")
	e.deactivate(inactiveCompany, inactiveWallet)
	tests := []struct {
		name, token, wallet, body string
		status                    int
		code, field               string
	}{
		{"from equals to", token, walletID, `{"amount":10,"from":"payin","to":"payin"}`, 400, "INVALID_FIELD", "to"},
		{"from equals default to", token, walletID, `{"amount":10,"from":"payout"}`, 400, "INVALID_FIELD", "to"},
		{"bad from", token, walletID, `{"amount":10,"from":"both"}`, 400, "INVALID_FIELD", "from"},
		{"bad to", token, walletID, `{"amount":10,"to":"card"}`, 400, "INVALID_FIELD", "to"},
		{"no amount", token, walletID, `{}`, 400, "INVALID_FIELD", "amount"},
		{"null amount", token, walletID, `{"amount":null}`, 400, "INVALID_FIELD", "amount"},
		{"amount as a string", token, walletID, `{"amount":"10"}`, 400, "INVALID_FIELD", "amount"},
		{"amount below 1", token, walletID, `{"amount":0}`, 400, "INVALID_FIELD", "amount"},
		{"decimals XAF has not", token, walletID, `{"amount":10.5}`, 400, "INVALID_FIELD", "amount"},
		{"unknown field", token, walletID, `{"amount":10,"fee":0}`, 400, "INVALID_FIELD", "fee"},
		{"more than payin", token, walletID, `{"amount":5900}`, 400, "INSUFFICIENT_WALLET_BALANCE", ""},
		{"reserved money does not move", token, walletID, `{"amount":1950,"from":"payout","to":"payin"}`, 400, "INSUFFICIENT_WALLET_BALANCE", ""},
		{"inactive wallet", inactiveToken, inactiveWallet, `{"amount":10,"from":"payout","to":"payin"}`, 400, "WALLET_INACTIVE", ""},
		{"another company's wallet", token, otherWallet, `{"amount":10,"from":"payout","to":"payin"}`, 404, "WALLET_NOT_FOUND", ""},
		{"another company's wallet, seen by it", otherToken, walletID, `{"amount":10}`, 404, "WALLET_NOT_FOUND", ""},
		{"unknown wallet", token, uuid.NewString(), `{"amount":10}`, 404, "WALLET_NOT_FOUND", ""},
		{"not a wallet id", token, "wallet-1", `{"amount":10}`, 404, "WALLET_NOT_FOUND", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Call(e.Wallets, tt.token, "POST", "/wallets/"+tt.wallet+"/transfer-internal", tt.body)
			if r.Status != tt.status || r.Str("code") != tt.code || (tt.field != "" && r.Str("field") != tt.field) {
				t.Fatalf("%d %s, want %d %s %s", r.Status, r.Raw, tt.status, tt.code, tt.field)
			}
		})
	}
	if got := e.balances(token, walletID); got != "5950/3990/1960" {
		t.Errorf("the refusals moved money: %s", got)
	}
	// The whole of payout_available moves, fee included (1940 + 19.4 → 19).
	if r := e.Call(e.Wallets, token, "POST", target, `{"amount":1941,"from":"payout","to":"payin"}`); r.Status != 200 ||
		r.Str("data", "wallet", "payout_available") != "0" {
		t.Fatalf("all of payout_available: %d %s", r.Status, r.Raw)
	}
	e.Verify(companyID)
	e.Verify(inactiveCompany)
}

// TestConcurrentTransfersInternal sends 20 transfers of 1000 XAF (fee 1 %,
// 1010 each) at once from a payin balance of 10000: exactly the 9 that fit
// move, and no balance goes below 0.
func TestConcurrentTransfersInternal(t *testing.T) {
	t.Parallel()
	e := newMovesTestEnv(t)
	companyID, token, walletID := e.Company("")
	e.credit(walletID, "payin", "10000")
	if r := e.Admin("PUT", "/admin/companies/"+companyID+"/fees", `{"rules":[{"type":"TRANSFER","percent":1}]}`); r.Status != 200 {
		t.Fatalf("fees: %s", r.Raw)
	}
	statuses := make([]int, 20)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() {
			statuses[i] = e.Call(e.Wallets, token, "POST", "/wallets/"+walletID+"/transfer-internal", `{"amount":1000}`).Status
		})
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[200] != 9 || count[400]+count[409] != 11 {
		t.Fatalf("statuses %v, want 9 × 200", count)
	}
	if got := e.balances(token, walletID); got != "910/9000/9000" {
		t.Errorf("payin/payout/available %s, want 910/9000/9000", got)
	}
	if n := len(e.events(companyID, evs.WalletTransferCompleted)); n != 9 {
		t.Errorf("%d wallet.transfer.completed events, want 9", n)
	}
	e.Verify(companyID)
}

// TestTransferInternalRecoversDebts: a transfer into a USD wallet's
// payout balance is a credit to it, which pays the company's pending
// debts first.
func TestTransferInternalRecoversDebts(t *testing.T) {
	t.Parallel()
	e := newMovesTestEnv(t)
	companyID, token, walletID := e.UsdCompany()
	e.credit(walletID, "payin", "10")
	debtID := e.PutDebt(companyID, 50, time.Now().UTC().Add(-time.Minute))
	r := e.Call(e.Wallets, token, "POST", "/wallets/"+walletID+"/transfer-internal", `{"amount":5}`)
	if r.Status != 200 || r.Str("data", "wallet", "payout_balance") != "4.5" || r.Str("data", "wallet", "payin_balance") != "5" {
		t.Fatalf("transfer: %d %s", r.Status, r.Raw)
	}
	fees := e.Call(e.Wallets, token, "GET", "/wallet/transactions?type=FEE", "")
	if len(fees.Items()) != 1 || fees.Items()[0].(map[string]any)["reference"] != debtID {
		t.Errorf("FEE entries: %s", fees.Raw)
	}
	if d := e.Call(e.Wallets, token, "GET", "/debts", ""); len(d.Items()) != 1 || d.Items()[0].(map[string]any)["status"] != "RECOVERED" {
		t.Errorf("debts: %s", d.Raw)
	}
	e.Verify(companyID)
}

// TestFundingConsoleDecisions declares bank transfers and has the console
// confirm or reject them: PENDING moves nothing; 20 concurrent confirms
// credit once; a rejection credits nothing; a second decision is 409.
func TestFundingConsoleDecisions(t *testing.T) {
	t.Parallel()
	e := newMovesTestEnv(t)
	companyID, token, walletID := e.Company("")
	fund := func(body string) apptest.Result {
		return e.Call(e.Wallets, token, "POST", "/wallets/fund", body)
	}

	r := fund(`{"wallet_id":"` + walletID + `","amount":5000,"reference":"wire-0001"}`)
	if r.Status != 202 || r.Str("data", "status") != "PENDING" || r.Str("data", "type") != "FUND" ||
		r.Str("data", "balance") != "payout" || r.Str("data", "amount") != "5000" || r.Str("data", "reference") != "wire-0001" ||
		r.Str("data", "wallet_balance_before") != "<nil>" || r.Str("data", "wallet_balance_after") != "<nil>" ||
		r.Str("data", "completed_at") != "<nil>" {
		t.Fatalf("fund: %d %s", r.Status, r.Raw)
	}
	confirmed := r.Str("data", "id")
	if got := e.balances(token, walletID); got != "0/0/0" {
		t.Fatalf("a PENDING funding moved money: %s", got)
	}

	statuses := make([]int, 20)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() { statuses[i] = e.Admin("POST", "/admin/wallet-funds/"+confirmed+"/confirm", "").Status })
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[200] != 1 || count[409] != 19 {
		t.Fatalf("concurrent confirms: %v, want one 200 and 19 × 409", count)
	}
	if got := e.balances(token, walletID); got != "0/5000/5000" {
		t.Errorf("after the confirmation: %s", got)
	}
	tx := e.Call(e.Wallets, token, "GET", "/wallet/transactions/"+confirmed, "")
	if tx.Str("data", "status") != "SUCCESS" || tx.Str("data", "wallet_balance_before") != "0" ||
		tx.Str("data", "wallet_balance_after") != "5000" || tx.Str("data", "completed_at") == "<nil>" {
		t.Errorf("the confirmed funding: %s", tx.Raw)
	}

	r = fund(`{"wallet_id":"` + walletID + `","amount":700,"balance":"payin","reference":"wire-0002"}`)
	if r.Status != 202 || r.Str("data", "balance") != "payin" {
		t.Fatalf("fund payin: %d %s", r.Status, r.Raw)
	}
	rejected := r.Str("data", "id")
	if r := e.Admin("POST", "/admin/wallet-funds/"+rejected+"/reject", ""); r.Status != 200 || r.Str("data", "status") != "FAILED" ||
		r.Str("data", "wallet_balance_after") != "<nil>" || r.Str("data", "completed_at") == "<nil>" {
		t.Fatalf("reject: %d %s", r.Status, r.Raw)
	}
	if got := e.balances(token, walletID); got != "0/5000/5000" {
		t.Errorf("the rejection moved money: %s", got)
	}

	tests := []struct {
		name, id, decision string
		status             int
		code               string
	}{
		{"confirm a confirmed funding", confirmed, "confirm", 409, "FUNDING_FINAL"},
		{"reject a confirmed funding", confirmed, "reject", 409, "FUNDING_FINAL"},
		{"confirm a rejected funding", rejected, "confirm", 409, "FUNDING_FINAL"},
		{"reject a rejected funding", rejected, "reject", 409, "FUNDING_FINAL"},
		{"unknown funding", uuid.NewString(), "confirm", 404, "TRANSACTION_NOT_FOUND"},
		{"not an id", "wire-0001", "reject", 404, "TRANSACTION_NOT_FOUND"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Admin("POST", "/admin/wallet-funds/"+tt.id+"/"+tt.decision, "")
			if r.Status != tt.status || r.Str("code") != tt.code {
				t.Fatalf("%d %s, want %d %s", r.Status, r.Raw, tt.status, tt.code)
			}
		})
	}
	if n, m := len(e.events(companyID, evs.WalletFundCompleted)), len(e.events(companyID, evs.WalletFundFailed)); n != 1 || m != 1 {
		t.Errorf("%d wallet.fund.completed and %d wallet.fund.failed events, want 1 and 1", n, m)
	}
	if got := e.balances(token, walletID); got != "0/5000/5000" {
		t.Errorf("at the end: %s", got)
	}
	e.Verify(companyID)
}

// TestFundingReference: a funding is idempotent on its reference, per
// company; and the declaration's refusals.
func TestFundingReference(t *testing.T) {
	t.Parallel()
	e := newMovesTestEnv(t)
	companyID, token, walletID := e.Company("")
	otherCompany, otherToken, otherWallet := e.Company("")
	r := e.Call(e.Wallets, otherToken, "POST", "/wallets", `{"currency":"USD","country":"United States","country_iso_code":"US","country_phone_code":"+1"}`)
	if r.Status != 201 {
		t.Fatal(r.Raw)
	}
	usdWallet := r.Str("data", "id")
	inactiveCompany, inactiveToken, inactiveWallet := e.Company("")
	body := func(wallet, amount, b, ref string) string {
		s := `{"wallet_id":"` + wallet + `","amount":` + amount + `,"reference":"` + ref + `"`
		if b != "" {
			s += `,"balance":"` + b + `"`
		}
		return s + "}"
	}
	first := e.Call(e.Wallets, token, "POST", "/wallets/fund", body(walletID, "100", "", "ref-1"))
	if first.Status != 202 {
		t.Fatalf("fund: %s", first.Raw)
	}
	id := first.Str("data", "id")
	inactiveFirst := e.Call(e.Wallets, inactiveToken, "POST", "/wallets/fund", body(inactiveWallet, "100", "", "ref-1"))
	if inactiveFirst.Status != 202 {
		t.Fatalf("fund: %s", inactiveFirst.Raw)
	}
	e.deactivate(inactiveCompany, inactiveWallet)

	tests := []struct {
		name, token, body string
		status            int
		code, field, id   string
	}{
		{"the same funding again", token, body(walletID, "100", "", "ref-1"), 200, "", "", id},
		{"the same, balance named", token, body(walletID, "100", "payout", "ref-1"), 200, "", "", id},
		{"another amount", token, body(walletID, "101", "", "ref-1"), 409, "DUPLICATE_REFERENCE", "", ""},
		{"another balance", token, body(walletID, "100", "payin", "ref-1"), 409, "DUPLICATE_REFERENCE", "", ""},
		{"another company's reference is its own", otherToken, body(otherWallet, "100", "", "ref-1"), 202, "", "", ""},
		{"the same again, wallet inactive since", inactiveToken, body(inactiveWallet, "100", "", "ref-1"), 200, "", "", inactiveFirst.Str("data", "id")},
		{"a new one, wallet inactive", inactiveToken, body(inactiveWallet, "100", "", "ref-2"), 400, "WALLET_INACTIVE", "", ""},
		{"no wallet", token, `{"amount":100,"reference":"r"}`, 400, "INVALID_FIELD", "wallet_id", ""},
		{"wallet not an id", token, body("w-1", "100", "", "r"), 400, "INVALID_FIELD", "wallet_id", ""},
		{"bad balance", token, body(walletID, "100", "card", "r"), 400, "INVALID_FIELD", "balance", ""},
		{"no amount", token, `{"wallet_id":"` + walletID + `","reference":"r"}`, 400, "INVALID_FIELD", "amount", ""},
		{"amount below 1", token, body(walletID, "0.5", "", "r"), 400, "INVALID_FIELD", "amount", ""},
		{"amount as a string", token, body(walletID, `"100"`, "", "r"), 400, "INVALID_FIELD", "amount", ""},
		{"cents USD has", otherToken, body(usdWallet, "10.25", "", "usd-1"), 202, "", "", ""},
		{"no reference", token, `{"wallet_id":"` + walletID + `","amount":100}`, 400, "INVALID_FIELD", "reference", ""},
		{"reference too long", token, body(walletID, "100", "", strings.Repeat("r", 256)), 400, "INVALID_FIELD", "reference", ""},
		{"another company's wallet", token, body(otherWallet, "100", "", "r"), 404, "WALLET_NOT_FOUND", "", ""},
		{"unknown wallet", token, body(uuid.NewString(), "100", "", "r"), 404, "WALLET_NOT_FOUND", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Call(e.Wallets, tt.token, "POST", "/wallets/fund", tt.body)
			if r.Status != tt.status || (tt.code != "" && r.Str("code") != tt.code) || (tt.field != "" && r.Str("field") != tt.field) ||
				(tt.id != "" && r.Str("data", "id") != tt.id) {
				t.Fatalf("%d %s, want %d %s %s %s", r.Status, r.Raw, tt.status, tt.code, tt.field, tt.id)
			}
		})
	}
	// A retry after the confirmation answers the funding as it is now.
	if r := e.Admin("POST", "/admin/wallet-funds/"+id+"/confirm", ""); r.Status != 200 {
		t.Fatal(r.Raw)
	}
	if r := e.Call(e.Wallets, token, "POST", "/wallets/fund", body(walletID, "100", "", "ref-1")); r.Status != 200 ||
		r.Str("data", "id") != id || r.Str("data", "status") != "SUCCESS" {
		t.Errorf("retry after the confirmation: %d %s", r.Status, r.Raw)
	}
	if got := e.balances(token, walletID); got != "0/100/100" {
		t.Errorf("credited %s, want 100 once", got)
	}
	for _, c := range []string{companyID, otherCompany, inactiveCompany} {
		e.Verify(c)
	}
}

// TestSandboxBank: in sandbox mode the sandbox bank answers each declared
// funding about five seconds later, through the funds queue: the
// fund-worker confirms one whose reference does not end in -reject and
// rejects one that does, through the console's code path; the console
// then finds them final. Messages for decided, unknown or malformed
// fundings are dropped.
func TestSandboxBank(t *testing.T) {
	t.Parallel()
	e := newMovesTestEnv(t)
	companyID, token, walletID := e.Company("")
	fund := func(amount, ref string) string {
		r := e.Call(e.Wallets, token, "POST", "/wallets/fund", `{"wallet_id":"`+walletID+`","amount":`+amount+`,"reference":"`+ref+`"}`)
		if r.Status != 202 {
			t.Fatalf("fund: %s", r.Raw)
		}
		return r.Str("data", "id")
	}
	ok, refused := fund("3000", "wire-77"), fund("900", "wire-78"+banksandbox.RejectSuffix)
	if n := queuetest.Depth(t, e.Sqs, e.funds); n != 2 {
		t.Fatalf("%d messages on the funds queue, want 2", n)
	}
	status := func(id string) string {
		return e.Call(e.Wallets, token, "GET", "/wallet/transactions/"+id, "").Str("data", "status")
	}
	e.pumpFunds(30*time.Second, func() bool { return status(ok) != "PENDING" && status(refused) != "PENDING" })
	if s, f := status(ok), status(refused); s != "SUCCESS" || f != "FAILED" {
		t.Fatalf("the sandbox bank made them %s and %s", s, f)
	}
	if got := e.balances(token, walletID); got != "0/3000/3000" {
		t.Errorf("after the sandbox bank: %s", got)
	}
	completed, failed := e.events(companyID, evs.WalletFundCompleted), e.events(companyID, evs.WalletFundFailed)
	if len(completed) != 1 || !strings.Contains(string(completed[0].Body), ok) || len(failed) != 1 || !strings.Contains(string(failed[0].Body), refused) {
		t.Errorf("events: %d completed, %d failed", len(completed), len(failed))
	}
	if r := e.Admin("POST", "/admin/wallet-funds/"+ok+"/reject", ""); r.Status != 409 {
		t.Errorf("the console after the bank: %d %s", r.Status, r.Raw)
	}

	// The console first: the bank's message finds the funding decided.
	early := fund("100", "wire-79")
	if r := e.Admin("POST", "/admin/wallet-funds/"+early+"/reject", ""); r.Status != 200 {
		t.Fatal(r.Raw)
	}
	msg := func(company, id string) string {
		b, _ := json.Marshal(banksandbox.Message{CompanyID: company, FundingID: id})
		return string(b)
	}
	for name, body := range map[string]string{
		"decided by the console": msg(companyID, early),
		"decided by the bank":    msg(companyID, ok),
		"unknown funding":        msg(companyID, uuid.NewString()),
		"another company's":      msg(uuid.NewString(), ok),
		"malformed":              `{"company_id":`,
		"no ids":                 `{}`,
	} {
		if n := e.fundMessage(body); n != 0 {
			t.Errorf("%s: %d batch item failures", name, n)
		}
	}
	if status(early) != "FAILED" {
		t.Errorf("the console's rejection was changed: %s", status(early))
	}
	if got := e.balances(token, walletID); got != "0/3000/3000" {
		t.Errorf("at the end: %s", got)
	}
	e.Verify(companyID)
}

// TestFundingRecoversDebts: a confirmed funding of a USD wallet's payout
// balance pays the company's pending debts first.
func TestFundingRecoversDebts(t *testing.T) {
	t.Parallel()
	e := newMovesTestEnv(t)
	companyID, token, walletID := e.UsdCompany()
	debtID := e.PutDebt(companyID, 50, time.Now().UTC().Add(-time.Minute))
	r := e.Call(e.Wallets, token, "POST", "/wallets/fund", `{"wallet_id":"`+walletID+`","amount":10,"reference":"usd-wire"}`)
	if r.Status != 202 {
		t.Fatalf("fund: %s", r.Raw)
	}
	id := r.Str("data", "id")
	b, _ := json.Marshal(banksandbox.Message{CompanyID: companyID, FundingID: id})
	if n := e.fundMessage(string(b)); n != 0 {
		t.Fatalf("%d batch item failures", n)
	}
	if got := e.balances(token, walletID); got != "0/9.5/9.5" {
		t.Errorf("after the funding: %s, want 0/9.5/9.5", got)
	}
	tx := e.Call(e.Wallets, token, "GET", "/wallet/transactions/"+id, "")
	if tx.Str("data", "status") != "SUCCESS" || tx.Str("data", "amount") != "10" || tx.Str("data", "wallet_balance_after") != "10" {
		t.Errorf("the funding: %s", tx.Raw)
	}
	fees := e.Call(e.Wallets, token, "GET", "/wallet/transactions?type=FEE", "")
	if len(fees.Items()) != 1 || fees.Items()[0].(map[string]any)["reference"] != debtID {
		t.Errorf("FEE entries: %s", fees.Raw)
	}
	if d := e.Call(e.Wallets, token, "GET", "/debts", ""); len(d.Items()) != 1 || d.Items()[0].(map[string]any)["status"] != "RECOVERED" {
		t.Errorf("debts: %s", d.Raw)
	}
	if n := len(e.events(companyID, evs.DebtRecovered)); n != 1 {
		t.Errorf("%d debt.recovered events, want 1", n)
	}
	e.Verify(companyID)
}

// TestFundWorkerInProduction: without a bank adapter, the fund-worker of
// production mode starts, and drops a message naming a PENDING funding
// without deciding it: the console does.
func TestFundWorkerInProduction(t *testing.T) {
	t.Parallel()
	e := newMovesTestEnv(t)
	companyID, token, walletID := e.Company("")
	r := e.Call(e.Wallets, token, "POST", "/wallets/fund", `{"wallet_id":"`+walletID+`","amount":100,"reference":"wire-prod"}`)
	if r.Status != 202 {
		t.Fatalf("fund: %d %s", r.Status, r.Raw)
	}
	id := r.Str("data", "id")
	cfg := apptest.Recording(e.Cfg, "fund-worker")
	cfg.Mode = function.ModeProduction
	worker, err := fundworker.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("fundworker.New in production mode: %v", err)
	}
	body, _ := json.Marshal(banksandbox.Message{CompanyID: companyID, FundingID: id})
	out, err := worker(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: string(body)}}})
	if err != nil || len(out.BatchItemFailures) != 0 {
		t.Fatalf("handled: %+v %v", out, err)
	}
	if tx := e.Call(e.Wallets, token, "GET", "/wallet/transactions/"+id, ""); tx.Str("data", "status") != "PENDING" {
		t.Errorf("the funding after the production worker: %s", tx.Raw)
	}
	e.Verify(companyID)
}
