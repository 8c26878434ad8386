package apiclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"payments/infra/local/localtest"
	"payments/infra/local/samples"
	"payments/pkg/apiclient"
	"payments/pkg/httpapi"
)

// TestProductionWalkthrough runs the README's "Production mode, locally"
// steps with the client generated from docs/openapi.yaml against a local
// stack in production mode, simulated pawaPay and simulated Stripe Issuing
// beside it as make run serves them, checking the figures the README shows.
func TestProductionWalkthrough(t *testing.T) {
	base, res := localtest.ServeStack(t, slog.New(slog.DiscardHandler),
		map[string]string{"Mode": "production", "AdminCreditInProduction": "true"})
	c, err := apiclient.NewClientWithResponses(base+httpapi.BasePath, apiclient.WithHTTPClient(&contractDoer{t: t}))
	if err != nil {
		t.Fatal(err)
	}
	w := &walk{t: t, ctx: context.Background(), c: c}

	// P1. A company of production mode, its XAF wallet credited by the console.
	w.company()
	xaf, err := w.c.CreateWalletWithResponse(w.ctx, apiclient.CreateWalletJSONRequestBody{
		Currency: "XAF", Country: "Cameroon", CountryIsoCode: "CM", CountryPhoneCode: "+237"}, w.auth)
	w.ok(xaf, err, http.StatusCreated, "P1. create the XAF wallet")
	w.xafWallet = xaf.JSON201.Data.Id.String()
	credit, err := w.c.CreditWalletWithResponse(w.ctx, w.xafWallet, apiclient.CreditWalletJSONRequestBody{
		Balance: "payout", Amount: "100000", Reference: "live-funding-0001"}, adminKey)
	w.ok(credit, err, http.StatusOK, "P1. credit the XAF wallet")

	// P2. A payout through pawaPay, settled by its callback.
	payout := apiclient.CreatePayoutJSONRequestBody{Operator: "mtn", Country: "CM", PhoneNumber: "237670000001", Amount: "5000", Currency: "XAF"}
	first, err := w.c.CreatePayoutWithResponse(w.ctx, nil, payout, w.auth)
	w.ok(first, err, http.StatusOK, "P2. a payout")
	tx := first.JSON200.Data.TransactionId.String()
	w.equal("P2. final status", w.settled("P2", tx).Status, "SUCCESS")
	up := w.upstream("P2", tx)
	w.equal("P2. pawaPay's payoutId", up["payoutId"], tx)
	w.equal("P2. pawaPay's status", up["status"], "COMPLETED")
	w.equal("P2. pawaPay's provider", strings.Contains(string(mustJSON(up["recipient"])), `"provider":"MTN_MOMO_CMR"`), true)

	// P3. pawaPay fails a payout: FAILED and refunded.
	failing := payout
	failing.Operator, failing.PhoneNumber = "orange", "237690000000"
	second, err := w.c.CreatePayoutWithResponse(w.ctx, nil, failing, w.auth)
	w.ok(second, err, http.StatusOK, "P3. a payout pawaPay fails")
	tx2 := second.JSON200.Data.TransactionId.String()
	failed := w.settled("P3", tx2)
	w.equal("P3. status", failed.Status, "FAILED")
	w.equal("P3. error_message", *failed.ErrorMessage, "recipient account not found")
	w.equal("P3. failure code", strings.Contains(string(mustJSON(w.upstream("P3", tx2)["failureReason"])), "RECIPIENT_NOT_FOUND"), true)
	payoutBalance, reserved, available, _ := w.xafWalletBalances("P3")
	w.equal("P3. balances", payoutBalance+" "+reserved+" "+available, "94925 0 94925")

	// P4. A collection: a pawaPay deposit.
	collect, err := w.c.CreateCollectionWithResponse(w.ctx, nil, apiclient.CreateCollectionJSONRequestBody{
		Operator: "mtn", Country: "CM", PhoneNumber: "237670000002", Amount: "20000", Currency: "XAF"}, w.auth)
	w.ok(collect, err, http.StatusOK, "P4. a collection")
	w.equal("P4. status", w.settled("P4", collect.JSON200.Data.TransactionId.String()).Status, "SUCCESS")
	_, _, _, payin := w.xafWalletBalances("P4")
	w.equal("P4. payin_balance", payin, "19800")

	// P5. A callback pawaPay did not sign: 401, nothing changes.
	forged, err := w.c.ReceivePawapayCallbackWithBodyWithResponse(w.ctx, "application/json",
		strings.NewReader(`{"payoutId":"`+tx2+`","status":"COMPLETED","metadata":{"companyId":"`+w.companyID+`"}}`))
	w.ok(forged, err, http.StatusUnauthorized, "P5. an unsigned callback")
	w.equal("P5. status after it", w.settled("P5", tx2).Status, "FAILED")

	// P6. An enrolment waits for the console's review, which decides once.
	docs := localtest.DocumentsURL(w.t)
	enrolled, err := w.c.EnrollCustomerWithResponse(w.ctx, apiclient.EnrollCustomerJSONRequestBody{
		FirstName: "Amina", LastName: "Njoya", Email: "amina.live@example.com", Country: "Cameroon",
		Street: "12 Rue de la Joie", City: "Douala", State: "Littoral", PostalCode: "00237",
		CountryIsoCode: "CM", CountryPhoneCode: "+237", PhoneNumber: "670000001",
		IdentificationNumber: "CM-1990-0412", IdDocumentType: "NIN",
		DateOfBirth:        openapi_types.Date{Time: time.Date(1990, 4, 12, 0, 0, 0, 0, time.UTC)},
		IdDocumentFrontUrl: docs + samples.FrontPath, IdDocumentBackUrl: docs + samples.BackPath,
	}, w.auth)
	w.ok(enrolled, err, http.StatusCreated, "P6. enrol a customer")
	w.equal("P6. kyc_status", enrolled.JSON201.Data.KycStatus, "PENDING_REVIEW")
	id := enrolled.JSON201.Data.Id.String()
	pending, err := w.c.ListCustomersPendingReviewWithResponse(w.ctx, &apiclient.ListCustomersPendingReviewParams{
		KycStatus: apiclient.ListCustomersPendingReviewParamsKycStatusPENDINGREVIEW}, adminKey)
	w.ok(pending, err, http.StatusOK, "P6. the review list")
	w.equal("P6. waiting", len(pending.JSON200.Data) == 1 && pending.JSON200.Data[0].Id.String() == id, true)
	decided, err := w.c.DecideCustomerKYCWithResponse(w.ctx, id, apiclient.DecideCustomerKYCJSONRequestBody{
		Status: apiclient.ConsoleKYCDecisionStatusVERIFIED, Reason: ptr("passport checked by hand")}, adminKey)
	w.ok(decided, err, http.StatusOK, "P6. verify")
	w.equal("P6. decided", decided.JSON200.Data.KycStatus, "VERIFIED")
	w.equal("P6. documents", len(decided.JSON200.Data.Documents), 2)
	link, err := http.Get(decided.JSON200.Data.Documents[0].Url)
	if err != nil {
		t.Fatal(err)
	}
	link.Body.Close()
	w.equal("P6. the front's link", fmt.Sprint(link.StatusCode, " ", link.Header.Get("Content-Type")), "200 image/png")
	again, err := w.c.DecideCustomerKYCWithResponse(w.ctx, id, apiclient.DecideCustomerKYCJSONRequestBody{
		Status: apiclient.ConsoleKYCDecisionStatusREJECTED, Reason: ptr("again")}, adminKey)
	w.ok(again, err, http.StatusConflict, "P6. a second decision")
	one, err := w.c.GetCustomerWithResponse(w.ctx, id, w.auth)
	w.ok(one, err, http.StatusOK, "P6. the company reads it")
	w.equal("P6. kyc_status for the company", one.JSON200.Data.KycStatus, "VERIFIED")

	// P7 to P11. Cards through Stripe Issuing, here the simulated one.
	w.productionCards(res.Params["IssuerBaseUrl"], res.Secrets["ISSUER_API_KEY"], id)
}

// upstream returns the operator's raw answer about payment tx.
func (w *walk) upstream(step, tx string) map[string]any {
	w.t.Helper()
	res, err := w.c.GetPaymentTransactionStatusWithResponse(w.ctx, tx,
		&apiclient.GetPaymentTransactionStatusParams{IncludeUpstreamResponse: ptr(true)}, w.auth)
	w.ok(res, err, http.StatusOK, step+": the status with upstream")
	up, ok := res.JSON200.Data.Upstream.(map[string]any)
	if !ok {
		w.t.Fatalf("%s: upstream %v", step, res.JSON200.Data.Upstream)
	}
	return up
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
