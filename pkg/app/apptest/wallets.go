package apptest

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/uuid"

	"payments/pkg/debts"
	"payments/pkg/ids"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
)

// OpenWallet opens a wallet of the company of token and returns its id.
func (e *PaymentsTestEnv) OpenWallet(token, currency, country, iso, dial string) string {
	e.T.Helper()
	r := e.Call(e.Wallets, token, "POST", "/wallets", fmt.Sprintf(`{"currency":%q,"country":%q,"country_iso_code":%q,"country_phone_code":%q}`, currency, country, iso, dial))
	if r.Status != 201 {
		e.T.Fatalf("open a %s wallet: %s", currency, r.Raw)
	}
	return r.Str("data", "id")
}

// FundPayin credits amount (major units) to the payin balance of wallet id
// through the operator console.
func (e *PaymentsTestEnv) FundPayin(id, amount string) {
	e.T.Helper()
	if r := e.Admin("POST", "/admin/wallets/"+id+"/credit", `{"balance":"payin","amount":`+amount+`,"reference":"`+uuid.NewString()+`"}`); r.Status != 200 {
		e.T.Fatalf("credit: %s", r.Raw)
	}
}

// SetRate sets the company's rate of from → to through the operator
// console and returns its exchangeRateId.
func (e *PaymentsTestEnv) SetRate(companyID, from, to, rate string) string {
	e.T.Helper()
	r := e.Admin("PUT", "/admin/companies/"+companyID+"/exchange-rates", fmt.Sprintf(`{"rates":[{"from_currency":%q,"to_currency":%q,"rate":%s}]}`, from, to, rate))
	if r.Status != 200 {
		e.T.Fatalf("set rate: %s", r.Raw)
	}
	for _, it := range r.Data()["rates"].([]any) {
		if m := it.(map[string]any); m["from_currency"] == from && m["to_currency"] == to {
			return m["exchangeRateId"].(string)
		}
	}
	e.T.Fatalf("rate %s → %s not listed: %s", from, to, r.Raw)
	return ""
}

// FxCompany creates an approved company with an XAF wallet whose payin
// balance holds payin XAF, a USD wallet, and its XAF → USD rate; it
// returns the company, a token, both wallets and the rate's
// exchangeRateId.
func (e *PaymentsTestEnv) FxCompany(payin, rate string) (id, token, xaf, usd, rateID string) {
	e.T.Helper()
	id, token, xaf = e.Company("")
	usd = e.OpenWallet(token, "USD", "United States", "US", "+1")
	e.FundPayin(xaf, payin)
	return id, token, xaf, usd, e.SetRate(id, "XAF", "USD", rate)
}

// VerifyBoth checks the ledger invariant and the debts against the
// ledger.
func (e *PaymentsTestEnv) VerifyBoth(companyID string) {
	e.T.Helper()
	e.Verify(companyID)
	if err := debts.VerifyLedger(context.Background(), moneystore.NewDebts(e.DB), moneystore.NewWallets(e.DB), companyID); err != nil {
		e.T.Fatalf("debt invariant: %v", err)
	}
}

// EntriesOf returns the company's TRANSFER entries of movement ref, by
// wallet.
func (e *PaymentsTestEnv) EntriesOf(token, ref string) map[string]map[string]any {
	e.T.Helper()
	out := map[string]map[string]any{}
	for _, it := range e.Call(e.Wallets, token, "GET", "/wallet/transactions?type=TRANSFER&limit=100", "").Items() {
		if m := it.(map[string]any); m["reference"] == ref {
			out[m["wallet_id"].(string)] = m
		}
	}
	return out
}

// Balances returns a wallet's payin and payout balances as GET /wallets
// shows them.
func (e *PaymentsTestEnv) Balances(token, id string) string {
	e.T.Helper()
	w := e.Wallet(token, id)
	return fmt.Sprintf("payin %v payout %v", w["payin_balance"], w["payout_balance"])
}

// PutDebt writes a pending debt of amount cents of the company, created
// at, as the card fee code records one: the record DEBT#<id> and its
// marker PENDINGDEBT#<id> (schema.DebtSK, schema.PendingDebtSK). It returns the debt id.
func (e *PaymentsTestEnv) PutDebt(companyID string, amount int64, at time.Time) string {
	e.T.Helper()
	id := ids.NewV7(at)
	for sk, kind := range map[string]string{schema.DebtSK(id): schema.KindDebt, schema.PendingDebtSK(id): schema.KindPendingDebt} {
		item, err := attributevalue.MarshalMap(map[string]any{
			"PK": schema.CompanyPK(companyID), "SK": sk, "type": kind, "id": id, "company_id": companyID,
			"fee_type": "payment_failure", "transaction_id": uuid.NewString(), "card_id": uuid.NewString(),
			"customer_id": uuid.NewString(), "amount": amount, "remaining": amount, "status": "PENDING",
			"created_at": timestamp.Format(at),
		})
		if err != nil {
			e.T.Fatal(err)
		}
		if _, err := e.DB.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(e.DB.Table), Item: item}); err != nil {
			e.T.Fatal(err)
		}
	}
	return id
}

// UsdCompany creates an approved company with an empty USD wallet and
// returns its id, a token and the wallet id.
func (e *PaymentsTestEnv) UsdCompany() (id, token, walletID string) {
	e.T.Helper()
	id, token, _ = e.Company("")
	r := e.Call(e.Wallets, token, "POST", "/wallets", `{"currency":"USD","country":"United States","country_iso_code":"US","country_phone_code":"+1"}`)
	if r.Status != 201 {
		e.T.Fatalf("USD wallet: %s", r.Raw)
	}
	return id, token, r.Str("data", "id")
}
