package apiclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"testing"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"payments/infra/local/localtest"
	"payments/infra/local/samples"
	"payments/pkg/apiclient"
	"payments/pkg/waittest"
)

// walk is what the README's walk-through carries from step to step.
type walk struct {
	t    *testing.T
	ctx  context.Context
	c    *apiclient.ClientWithResponses
	auth apiclient.RequestEditorFn

	companyID, xafWallet, usdWallet, customerID string
}

// TestWalkthrough runs the README's walk-through, step by step, with the
// client generated from docs/openapi.yaml against a local stack, checking
// the figures the README shows.
func TestWalkthrough(t *testing.T) {
	w := &walk{t: t, ctx: context.Background(), c: startStack(t)}
	w.company()
	w.wallets()
	w.payouts()
	w.customers()
	w.cards()
	w.cardNetwork()
	w.betweenWallets()
	w.bulk()
}

// ok fails the walk unless res answered want.
func (w *walk) ok(res interface{ StatusCode() int }, err error, want int, step string) {
	w.t.Helper()
	if err != nil {
		w.t.Fatalf("%s: %v", step, err)
	}
	if got := res.StatusCode(); got != want {
		w.t.Fatalf("%s: %d, want %d", step, got, want)
	}
}

// equal fails the walk unless got is want, compared as text.
func (w *walk) equal(step string, got, want any) {
	w.t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		w.t.Errorf("%s: %v, want %v", step, got, want)
	}
}

func ptr[T any](v T) *T { return &v }

// sum returns the whole amount a plus b, as text.
func sum(a string, b int64) string {
	n, err := json.Number(a).Int64()
	if err != nil {
		return "not whole: " + a
	}
	return fmt.Sprint(n + b)
}

// Steps 1 to 3: the operator creates and approves a company, which gets a
// token.
func (w *walk) company() {
	created, err := w.c.CreateCompanyWithResponse(w.ctx, apiclient.CreateCompanyJSONRequestBody{Name: "Acme Ltd"}, adminKey)
	w.ok(created, err, http.StatusCreated, "1. create the company")
	co := created.JSON201.Data
	w.companyID = co.Id.String()

	approved, err := w.c.UpdateCompanyWithResponse(w.ctx, w.companyID,
		apiclient.UpdateCompanyJSONRequestBody{KybStatus: ptr(apiclient.ConsoleCompanyPatchKybStatusAPPROVED)}, adminKey)
	w.ok(approved, err, http.StatusOK, "2. approve its KYB")
	w.equal("2. kyb_status", approved.JSON200.Data.KybStatus, "APPROVED")

	token, err := w.c.CreateAccessTokenWithResponse(w.ctx, apiclient.CreateAccessTokenJSONRequestBody{ClientId: co.ClientId, ClientKey: co.ClientKey})
	w.ok(token, err, http.StatusOK, "3. get a token")
	w.auth = bearer(token.JSON200.AccessToken)
}

// Steps 4 to 6: an XAF and a USD wallet; the operator funds the XAF one.
func (w *walk) wallets() {
	xaf, err := w.c.CreateWalletWithResponse(w.ctx, apiclient.CreateWalletJSONRequestBody{
		Currency: "XAF", Country: "Cameroon", CountryIsoCode: "CM", CountryPhoneCode: "+237"}, w.auth)
	w.ok(xaf, err, http.StatusCreated, "4. create the XAF wallet")
	w.xafWallet = xaf.JSON201.Data.Id.String()
	usd, err := w.c.CreateWalletWithResponse(w.ctx, apiclient.CreateWalletJSONRequestBody{
		Currency: "USD", Country: "United States", CountryIsoCode: "US", CountryPhoneCode: "+1"}, w.auth)
	w.ok(usd, err, http.StatusCreated, "4. create the USD wallet")
	w.usdWallet = usd.JSON201.Data.Id.String()

	credit, err := w.c.CreditWalletWithResponse(w.ctx, w.xafWallet, apiclient.CreditWalletJSONRequestBody{
		Balance: "payout", Amount: "100000", Reference: "funding-0001"}, adminKey)
	w.ok(credit, err, http.StatusOK, "5. fund the XAF wallet")
	w.equal("5. payout_balance", credit.JSON200.Data.Wallet.PayoutBalance, "100000")

	balance, err := w.c.GetPaymentBalanceWithResponse(w.ctx, w.auth)
	w.ok(balance, err, http.StatusOK, "6. payment balance")
	partner, err := w.c.ListPartnerWalletsWithResponse(w.ctx, w.auth)
	w.ok(partner, err, http.StatusOK, "6. partner wallets")
	usdBalance, err := w.c.GetUSDWalletBalanceWithResponse(w.ctx, w.auth)
	w.ok(usdBalance, err, http.StatusOK, "6. USD balance")
	ledger, err := w.c.ListTransactionsOfWalletWithResponse(w.ctx, w.xafWallet,
		&apiclient.ListTransactionsOfWalletParams{Page: ptr(1), Limit: ptr(10)}, w.auth)
	w.ok(ledger, err, http.StatusOK, "6. the XAF wallet's ledger")
	w.equal("6. ledger entries", len(ledger.JSON200.Data), 1)
}

// xafWalletBalances returns the XAF wallet's payout balance, reserved and
// available amounts, and payin balance.
func (w *walk) xafWalletBalances(step string) (payout, reserved, available, payin string) {
	w.t.Helper()
	res, err := w.c.ListWalletsWithResponse(w.ctx, w.auth)
	w.ok(res, err, http.StatusOK, step+": list the wallets")
	for _, wl := range res.JSON200.Data {
		if wl.Id.String() == w.xafWallet {
			return string(wl.PayoutBalance), string(wl.PayoutReserved), string(wl.PayoutAvailable), string(wl.PayinBalance)
		}
	}
	w.t.Fatalf("%s: no XAF wallet in the list", step)
	return
}

// settled waits until payment tx is no longer PENDING and returns it.
func (w *walk) settled(step, tx string) apiclient.PaymentTransactionStatus {
	w.t.Helper()
	var got apiclient.PaymentTransactionStatus
	waittest.Until(w.t, 30*time.Second, step+": the operator's answer", func() bool {
		res, err := w.c.GetPaymentTransactionStatusWithResponse(w.ctx, tx, nil, w.auth)
		if err != nil || res.JSON200 == nil {
			return false
		}
		got = res.JSON200.Data
		return got.Status != apiclient.PaymentStatusPENDING && got.Status != apiclient.PaymentStatusPROCESSING
	})
	return got
}

// Steps 7 to 10: payouts, one retried with its Idempotency-Key, one
// failing and refunded, the business refusals, and the delivery log.
func (w *walk) payouts() {
	payout := apiclient.CreatePayoutJSONRequestBody{Operator: "mtn", Country: "CM", PhoneNumber: "237670000001", Amount: "5000", Currency: "XAF"}
	key := &apiclient.CreatePayoutParams{IdempotencyKey: ptr("walkthrough-payout-7")}
	first, err := w.c.CreatePayoutWithResponse(w.ctx, key, payout, w.auth)
	w.ok(first, err, http.StatusOK, "7. a payout")
	tx := first.JSON200.Data.TransactionId.String()
	w.equal("7. status", first.JSON200.Data.Status, "PENDING")
	w.equal("7. fee", first.JSON200.Data.FeeAmount, "75")
	payoutBalance, reserved, _, _ := w.xafWalletBalances("7")
	w.equal("7. reserved", reserved, "5075")

	retry, err := w.c.CreatePayoutWithResponse(w.ctx, key, payout, w.auth)
	w.ok(retry, err, http.StatusOK, "7. the payout retried with its Idempotency-Key")
	w.equal("7. the retry's transaction", retry.JSON200.Data.TransactionId, tx)
	w.equal("7. Idempotent-Replayed", retry.HTTPResponse.Header.Get("Idempotent-Replayed"), "true")
	if _, again, _, _ := w.xafWalletBalances("7"); again != reserved {
		w.t.Errorf("7. the retry reserved again: %s, want %s", again, reserved)
	}
	w.equal("7. payout_balance before the answer", payoutBalance, "100000")
	w.equal("7. final status", w.settled("7", tx).Status, "SUCCESS")
	payoutBalance, reserved, _, _ = w.xafWalletBalances("7")
	w.equal("7. payout_balance after", payoutBalance, "94925")
	w.equal("7. reserved after", reserved, "0")

	failing := payout
	failing.Operator, failing.PhoneNumber = "orange", "237690000000"
	second, err := w.c.CreatePayoutWithResponse(w.ctx, nil, failing, w.auth)
	w.ok(second, err, http.StatusOK, "8. a payout to a number that fails")
	failed := w.settled("8", second.JSON200.Data.TransactionId.String())
	w.equal("8. status", failed.Status, "FAILED")
	payoutBalance, reserved, available, _ := w.xafWalletBalances("8")
	w.equal("8. payout_balance after the refund", payoutBalance, "94925")
	w.equal("8. reserved after the refund", reserved, "0")
	w.equal("8. available after the refund", available, "94925")
	ledger, err := w.c.ListTransactionsOfWalletWithResponse(w.ctx, w.xafWallet,
		&apiclient.ListTransactionsOfWalletParams{Page: ptr(1), Limit: ptr(2)}, w.auth)
	w.ok(ledger, err, http.StatusOK, "8. the XAF wallet's ledger")
	var newest []string
	for _, e := range ledger.JSON200.Data {
		newest = append(newest, fmt.Sprint(e.Type, " ", e.Status, " ", e.AmountWithFee))
	}
	w.equal("8. the newest ledger entries", newest, []string{"REFUND SUCCESS 5075", "WITHDRAW FAILED 5075"})

	for _, tc := range []struct {
		step string
		body apiclient.CreatePayoutJSONRequestBody
		code string
	}{
		{"9. over-spending", apiclient.CreatePayoutJSONRequestBody{Operator: "mtn", Country: "CM", PhoneNumber: "237670000001", Amount: "1000000", Currency: "XAF"}, "INSUFFICIENT_BALANCE"},
		{"9. an unsupported operator", apiclient.CreatePayoutJSONRequestBody{Operator: "wave", Country: "CM", PhoneNumber: "237670000001", Amount: "100", Currency: "XAF"}, "OPERATOR_UNAVAILABLE"},
	} {
		res, err := w.c.CreatePayoutWithResponse(w.ctx, nil, tc.body, w.auth)
		if err != nil || res.StatusCode() < 400 {
			w.t.Fatalf("%s: %v %s", tc.step, err, res.Body)
		}
		var body apiclient.Error
		json.Unmarshal(res.Body, &body)
		w.equal(tc.step, body.Code, tc.code)
	}
	external := payout
	external.Amount, external.ExternalId = "100", ptr("order-walkthrough")
	dup, err := w.c.CreatePayoutWithResponse(w.ctx, nil, external, w.auth)
	w.ok(dup, err, http.StatusOK, "9. a payout with an external_id")
	defer w.settled("9", dup.JSON200.Data.TransactionId.String())
	dup, err = w.c.CreatePayoutWithResponse(w.ctx, nil, external, w.auth)
	w.ok(dup, err, http.StatusBadRequest, "9. the same external_id again")
	w.equal("9. duplicate external_id", dup.JSON400.Code, "DUPLICATE_EXTERNAL_ID")

	log, err := w.c.ListWebhookEventsWithResponse(w.ctx, &apiclient.ListWebhookEventsParams{Limit: ptr(5)}, w.auth)
	w.ok(log, err, http.StatusOK, "10. the delivery log")
	if len(log.JSON200.Data) == 0 {
		w.t.Error("10. the delivery log is empty")
	}
}

// Steps 11 to 13: a customer enrolled from two document URLs, listed and
// read; the same email again is a 409, a document that is not one a 422;
// and a customer enrolled from uploaded files.
func (w *walk) customers() {
	docs := localtest.DocumentsURL(w.t)
	amina := apiclient.EnrollCustomerJSONRequestBody{
		FirstName: "Amina", LastName: "Njoya", Email: "amina.njoya@example.com", Country: "Cameroon",
		Street: "12 Rue de la Joie", City: "Douala", State: "Littoral", PostalCode: "00237",
		CountryIsoCode: "CM", CountryPhoneCode: "+237", PhoneNumber: "670000001",
		IdentificationNumber: "CM-1990-0412", IdDocumentType: "NIN",
		DateOfBirth:        openapi_types.Date{Time: time.Date(1990, 4, 12, 0, 0, 0, 0, time.UTC)},
		IdDocumentFrontUrl: docs + samples.FrontPath, IdDocumentBackUrl: docs + samples.BackPath,
	}
	enrolled, err := w.c.EnrollCustomerWithResponse(w.ctx, amina, w.auth)
	w.ok(enrolled, err, http.StatusCreated, "11. enrol a customer")
	w.customerID = enrolled.JSON201.Data.Id.String()
	w.equal("11. kyc_status", enrolled.JSON201.Data.KycStatus, "VERIFIED")

	list, err := w.c.ListCustomersWithResponse(w.ctx, &apiclient.ListCustomersParams{Limit: ptr(10)}, w.auth)
	w.ok(list, err, http.StatusOK, "12. list the customers")
	w.equal("12. total", list.JSON200.Pagination.Total, 1)
	one, err := w.c.GetCustomerWithResponse(w.ctx, w.customerID, w.auth)
	w.ok(one, err, http.StatusOK, "12. read the customer")
	w.equal("12. first_name", one.JSON200.Data.FirstName, "Amina")
	again := amina
	again.IdentificationNumber = "CM-OTHER-1"
	dup, err := w.c.EnrollCustomerWithResponse(w.ctx, again, w.auth)
	w.ok(dup, err, http.StatusConflict, "12. the same email again")
	w.equal("12. code", dup.JSON409.Code, "DUPLICATE_CUSTOMER")

	html := amina
	html.Email, html.IdentificationNumber, html.IdDocumentFrontUrl = "kofi.mensah@example.com", "CM-OTHER-2", docs+samples.HTMLPath
	bad, err := w.c.EnrollCustomerWithResponse(w.ctx, html, w.auth)
	w.ok(bad, err, http.StatusUnprocessableEntity, "13. a document that is not one")
	w.equal("13. field", ptrValue(bad.JSON422.Field), "id_document_front_url")

	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	for k, v := range map[string]string{
		"first_name": "Kwame", "last_name": "Asante", "email": "kwame.asante@example.com", "country": "Cameroon",
		"street": "3 Rue Njo-Njo", "city": "Douala", "state": "Littoral", "postal_code": "00237", "country_iso_code": "CM",
		"country_phone_code": "+237", "phone_number": "670000003", "identification_number": "CM-1985-0101",
		"id_document_type": "PASSPORT", "date_of_birth": "1985-01-01",
	} {
		mw.WriteField(k, v)
	}
	for field, path := range map[string]string{"id_document_front": samples.FrontPath, "id_document_back": samples.BackPath} {
		fw, _ := mw.CreateFormFile(field, path[1:])
		fw.Write(w.document(docs + path))
	}
	mw.Close()
	uploaded, err := w.c.UploadCustomerWithBodyWithResponse(w.ctx, mw.FormDataContentType(), &form, w.auth)
	w.ok(uploaded, err, http.StatusCreated, "the customer enrolled from uploaded files")
}

// document fetches one of the sample identity documents.
func (w *walk) document(url string) []byte {
	w.t.Helper()
	res, err := http.Get(url)
	if err != nil {
		w.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		w.t.Fatalf("GET %s: %d %v", url, res.StatusCode, err)
	}
	return b
}

func ptrValue[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// Steps 24 to 28: a collection, collected money made payable and paid out,
// a quoted deposit to USD that moves the quote's figures, a conversion, and
// a stale quote refused.
func (w *walk) betweenWallets() {
	collect, err := w.c.CreateCollectionWithResponse(w.ctx, nil, apiclient.CreateCollectionJSONRequestBody{
		Operator: "mtn", Country: "CM", PhoneNumber: "237670000002", Amount: "20000", Currency: "XAF"}, w.auth)
	w.ok(collect, err, http.StatusOK, "24. a collection")
	w.equal("24. status", w.settled("24", collect.JSON200.Data.TransactionId.String()).Status, "SUCCESS")
	_, _, _, payin := w.xafWalletBalances("24")
	w.equal("24. payin_balance", payin, "19800")

	before, _, _, _ := w.xafWalletBalances("25")
	move, err := w.c.TransferBetweenSubBalancesWithResponse(w.ctx, w.xafWallet, nil, apiclient.TransferBetweenSubBalancesJSONRequestBody{Amount: "5000"}, w.auth)
	w.ok(move, err, http.StatusOK, "25. payin to payout")
	payout, _, _, payin := w.xafWalletBalances("25")
	w.equal("25. payin_balance", payin, "14800")
	w.equal("25. payout_balance", payout, sum(before, 5000))

	rates, err := w.c.SetCompanyExchangeRatesWithResponse(w.ctx, w.companyID, apiclient.SetCompanyExchangeRatesJSONRequestBody{
		Rates: []apiclient.ConsoleExchangeRateInput{{FromCurrency: "XAF", ToCurrency: "USD", Rate: "0.0016"}}}, adminKey)
	w.ok(rates, err, http.StatusOK, "26. the operator sets a rate")
	quote, err := w.c.QuoteConversionWithResponse(w.ctx, apiclient.QuoteConversionJSONRequestBody{FromCurrency: "XAF", ToCurrency: "USD", Amount: "5000"}, w.auth)
	w.ok(quote, err, http.StatusOK, "26. a quote")
	q := quote.JSON200.Data
	w.equal("26. the quote: amount, fee, fee currency, total, converted, net", []any{q.Amount, q.FeeAmount, q.FeeCurrency, q.TotalAmount, q.ConvertedAmount, q.NetAmount},
		[]any{"5000", "50", "XAF", "5050", "8", "8"})
	rateID := q.ExchangeRateId

	body := apiclient.DepositBetweenWalletsJSONRequestBody{}
	body.SourceWallet.Id, body.SourceWallet.Amount = w.xafWallet, "5000"
	body.DestinationWallet.Id = w.usdWallet
	body.ExchangeRate.ExchangeRateId = rateID.String()
	deposit, err := w.c.DepositBetweenWalletsWithResponse(w.ctx, nil, body, w.auth)
	w.ok(deposit, err, http.StatusOK, "27. a deposit at the quote")
	d := deposit.JSON200.Data
	w.equal("27. the deposit moves the quote's figures: amount, fee, total, converted", []any{d.Amount, d.FeeAmount, d.TotalAmount, d.ConvertedAmount},
		[]any{q.Amount, q.FeeAmount, q.TotalAmount, q.ConvertedAmount})
	w.equal("27. payin_balance after the deposit", d.SourceWallet.PayinBalance, "9750")

	conversion, err := w.c.ConvertToUSDWithResponse(w.ctx, nil, apiclient.ConvertToUSDJSONRequestBody{
		SourceWalletId: w.xafWallet, Amount: 5000, ExchangeRateId: ptr(rateID.String())}, w.auth)
	w.ok(conversion, err, http.StatusOK, "27. a conversion at the quote's rate")
	c := conversion.JSON200.Data
	w.equal("27. the conversion: converted, fee, credited, payin after", []any{c.ConvertedAmount, c.FeeAmount, c.CreditedAmount, c.SourcePayinBalanceAfter},
		[]any{"8", "0.08", "7.92", "4750"})

	_, err = w.c.SetCompanyExchangeRatesWithResponse(w.ctx, w.companyID, apiclient.SetCompanyExchangeRatesJSONRequestBody{
		Rates: []apiclient.ConsoleExchangeRateInput{{FromCurrency: "XAF", ToCurrency: "USD", Rate: "0.00165"}}}, adminKey)
	if err != nil {
		w.t.Fatal(err)
	}
	stale, err := w.c.ConvertToUSDWithResponse(w.ctx, nil, apiclient.ConvertToUSDJSONRequestBody{
		SourceWalletId: w.xafWallet, Amount: 1000, ExchangeRateId: ptr(rateID.String())}, w.auth)
	w.ok(stale, err, http.StatusBadRequest, "28. a conversion at the old quote")
	w.equal("28. code", stale.JSON400.Code, "RATE_CHANGED")
}
