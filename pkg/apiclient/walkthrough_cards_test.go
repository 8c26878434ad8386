package apiclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"

	"payments/infra/local/localtest"
	"payments/pkg/apiclient"
	"payments/pkg/issuerhooks"
	"payments/pkg/waittest"
)

// card reads card id without asking the issuer.
func (w *walk) card(step, id string) apiclient.CardDetail {
	w.t.Helper()
	res, err := w.c.GetCardWithResponse(w.ctx, id, &apiclient.GetCardParams{Sync: ptr(false)}, w.auth)
	w.ok(res, err, http.StatusOK, step+": read the card")
	return res.JSON200.Data
}

// Steps 14 to 17: a card issued from the USD wallet (retried with its
// Idempotency-Key), funded, frozen, unfrozen, withdrawn from, revealed and
// terminated.
func (w *walk) cards() {
	credit, err := w.c.CreditWalletWithResponse(w.ctx, w.usdWallet, apiclient.CreditWalletJSONRequestBody{
		Balance: "payout", Amount: "100", Reference: "usd-funding-0001"}, adminKey)
	w.ok(credit, err, http.StatusOK, "14. fund the USD wallet")

	issue := apiclient.IssueCardJSONRequestBody{CustomerId: w.customerID, Amount: "25"}
	key := &apiclient.IssueCardParams{IdempotencyKey: ptr("walkthrough-card-14")}
	issued, err := w.c.IssueCardWithResponse(w.ctx, key, issue, w.auth)
	w.ok(issued, err, http.StatusCreated, "14. issue a card")
	id := issued.JSON201.Data.Id.String()
	w.equal("14. balance", issued.JSON201.Data.Balance, "25")
	retry, err := w.c.IssueCardWithResponse(w.ctx, key, issue, w.auth)
	w.ok(retry, err, http.StatusCreated, "14. the issue retried with its Idempotency-Key")
	w.equal("14. the retry's card", retry.JSON201.Data.Id, id)
	cards, err := w.c.ListCardsWithResponse(w.ctx, nil, w.auth)
	w.ok(cards, err, http.StatusOK, "14. list the cards")
	w.equal("14. cards issued", len(cards.JSON200.Data.Cards), 1)

	fund, err := w.c.FundCardWithResponse(w.ctx, id, nil, apiclient.FundCardJSONRequestBody{Amount: "10"}, w.auth)
	w.ok(fund, err, http.StatusOK, "15. fund the card")
	frozen, err := w.c.FreezeCardWithResponse(w.ctx, id, &apiclient.FreezeCardParams{Lock: ptr(true)}, w.auth)
	w.ok(frozen, err, http.StatusOK, "15. freeze and lock it")
	locked, err := w.c.UnfreezeCardWithResponse(w.ctx, id, nil, w.auth)
	w.ok(locked, err, http.StatusBadRequest, "15. unfreeze a locked card without unlock")
	unfrozen, err := w.c.UnfreezeCardWithResponse(w.ctx, id, &apiclient.UnfreezeCardParams{Unlock: ptr(true)}, w.auth)
	w.ok(unfrozen, err, http.StatusOK, "15. unfreeze and unlock it")
	withdrawn, err := w.c.WithdrawFromCardWithResponse(w.ctx, id, nil, apiclient.WithdrawFromCardJSONRequestBody{Amount: "5"}, w.auth)
	w.ok(withdrawn, err, http.StatusOK, "15. withdraw from it")
	w.equal("15. balance", w.card("15", id).Balance, "30")

	revealed, err := w.c.GetCardWithResponse(w.ctx, id, &apiclient.GetCardParams{Reveal: ptr(true)}, w.auth)
	w.ok(revealed, err, http.StatusOK, "16. reveal its number")
	reveals, err := w.c.ListCardRevealsWithResponse(w.ctx, id, nil, w.auth)
	w.ok(reveals, err, http.StatusOK, "16. the reveal log")
	w.equal("16. reveals", len(reveals.JSON200.Data), 1)

	terminated, err := w.c.TerminateCardWithResponse(w.ctx, id, nil, apiclient.TerminateCardJSONRequestBody{}, w.auth)
	w.ok(terminated, err, http.StatusOK, "17. terminate it")
	txs, err := w.c.ListCardTransactionsWithResponse(w.ctx, id, nil, w.auth)
	w.ok(txs, err, http.StatusOK, "17. its transactions")
	if len(txs.JSON200.Data) < 4 {
		w.t.Errorf("17. %d card transactions, want the issuance, funding, withdrawal and termination", len(txs.JSON200.Data))
	}
}

// sandbox checks that a card-network sandbox call answered 201 with the
// card transaction it made, and returns it.
func (w *walk) sandbox(step string, status int, body []byte, err error) apiclient.CardTransaction {
	w.t.Helper()
	if err != nil {
		w.t.Fatalf("%s: %v", step, err)
	}
	if status != http.StatusCreated {
		w.t.Fatalf("%s: %d %s, want 201", step, status, body)
	}
	var res struct{ Data apiclient.CardTransaction }
	if err := json.Unmarshal(body, &res); err != nil {
		w.t.Fatalf("%s: %v", step, err)
	}
	return res.Data
}

// Steps 18 to 20: the card network, played by the sandbox: a hold,
// settlements at home and abroad with the cross-border fee, a refund, and
// a frozen card's decline charged the failed-payment fee; then step 23's
// read of the issuer's record, whose balance is ours, and the network's
// own request, signed, sent three times, holding once.
func (w *walk) cardNetwork() {
	issued, err := w.c.IssueCardWithResponse(w.ctx, nil, apiclient.IssueCardJSONRequestBody{CustomerId: w.customerID, Amount: "20"}, w.auth)
	w.ok(issued, err, http.StatusCreated, "18. a second card")
	id := issued.JSON201.Data.Id.String()

	res, err := w.c.SandboxAuthorizeCardWithResponse(w.ctx, id, nil, apiclient.SandboxAuthorizeCardJSONRequestBody{
		Amount: ptr(json.Number("12.5")), MerchantName: "Book Shop", MerchantCity: "Austin"}, w.auth)
	purchase := w.sandbox("18. a purchase", res.StatusCode(), res.Body, err)
	card := w.card("18", id)
	w.equal("18. balance", card.Balance, "20")
	w.equal("18. available_balance", card.AvailableBalance, "7.5")

	settle, err := w.c.SandboxSettleCardAuthorizationWithResponse(w.ctx, purchase.Id.String(), nil, apiclient.SandboxSettleCardAuthorizationJSONRequestBody{}, w.auth)
	w.sandbox("19. settle it", settle.StatusCode(), settle.Body, err)
	res, err = w.c.SandboxAuthorizeCardWithResponse(w.ctx, id, nil, apiclient.SandboxAuthorizeCardJSONRequestBody{
		Amount: ptr(json.Number("5")), MerchantName: "Librairie", MerchantCity: "Lyon", MerchantCountry: ptr("FR")}, w.auth)
	abroad := w.sandbox("19. a purchase abroad", res.StatusCode(), res.Body, err)
	settle, err = w.c.SandboxSettleCardAuthorizationWithResponse(w.ctx, abroad.Id.String(), nil, apiclient.SandboxSettleCardAuthorizationJSONRequestBody{}, w.auth)
	w.sandbox("19. settle it", settle.StatusCode(), settle.Body, err)
	w.equal("19. balance after the cross-border fee of 0.63", w.card("19", id).Balance, "1.87")
	refund, err := w.c.SandboxRefundCardAuthorizationWithResponse(w.ctx, abroad.Id.String(), nil, apiclient.SandboxRefundCardAuthorizationJSONRequestBody{Amount: ptr(json.Number("2"))}, w.auth)
	w.sandbox("19. refund 2.00 of it", refund.StatusCode(), refund.Body, err)
	again, err := w.c.SandboxSettleCardAuthorizationWithResponse(w.ctx, abroad.Id.String(), nil, apiclient.SandboxSettleCardAuthorizationJSONRequestBody{}, w.auth)
	w.ok(again, err, http.StatusBadRequest, "19. settle it again")
	w.equal("19. code", again.JSON400.Code, "ALREADY_SETTLED")

	frozen, err := w.c.FreezeCardWithResponse(w.ctx, id, nil, w.auth)
	w.ok(frozen, err, http.StatusOK, "20. freeze the card")
	res, err = w.c.SandboxAuthorizeCardWithResponse(w.ctx, id, nil, apiclient.SandboxAuthorizeCardJSONRequestBody{
		Amount: ptr(json.Number("1")), MerchantName: "Kiosk", MerchantCity: "Austin"}, w.auth)
	declined := w.sandbox("20. a purchase on the frozen card", res.StatusCode(), res.Body, err)
	w.equal("20. type", declined.Type, "DECLINE")
	w.equal("20. fee", declined.FeeAmount, "0.5")
	w.equal("20. balance after the fee", w.card("20", id).Balance, "3.37")
	unfrozen, err := w.c.UnfreezeCardWithResponse(w.ctx, id, nil, w.auth)
	w.ok(unfrozen, err, http.StatusOK, "20. unfreeze the card")

	// The issuer was told of every movement: its record of the card agrees
	// (a decision's fee once the card-worker has applied its advice).
	var raw *apiclient.GetCardResponse
	waittest.Until(w.t, 30*time.Second, "23. the issuer's record of the card has our balance", func() bool {
		raw, err = w.c.GetCardWithResponse(w.ctx, id, &apiclient.GetCardParams{IncludeRaw: ptr(true)}, w.auth)
		return err == nil && raw.JSON200 != nil && raw.JSON200.Data.Raw.Balance != nil && *raw.JSON200.Data.Raw.Balance == "3.37"
	})

	// The network's own request, as the issuer sends it: signed, sent
	// three times, it is decided once and holds once.
	body, err := json.Marshal(map[string]any{"id": "ntx_readme_0001", "card_id": raw.JSON200.Data.Raw.Id, "reference": id,
		"kind": "AUTHORIZATION", "amount": 100, "currency": "USD", "merchant": map[string]string{"name": "Cafe", "city": "Austin", "country": "US"}})
	if err != nil {
		w.t.Fatal(err)
	}
	var decided []string
	var cents []int
	for range 3 {
		signed := func(_ context.Context, r *http.Request) error {
			r.Header.Set(issuerhooks.Header, issuerhooks.Sign([]byte(localtest.IssuerWebhookSecret), body, time.Now()))
			return nil
		}
		d, err := w.c.DecideCardAuthorizationWithBodyWithResponse(w.ctx, "application/json", bytes.NewReader(body), signed)
		w.ok(d, err, http.StatusOK, "23. the network's request")
		w.equal("23. the decision", d.JSON200.Data.Decision, apiclient.CardAuthorizationDecisionDecision("APPROVED"))
		decided = append(decided, d.JSON200.Data.TransactionId.String())
		cents = append(cents, d.JSON200.Data.AvailableBalance)
	}
	w.equal("23. one transaction for the three requests", decided[1:], []string{decided[0], decided[0]})
	w.equal("23. available_balance after one hold of 1.00", w.card("23", id).AvailableBalance, "2.37")
	// The network speaks cents, the card routes dollars (the README says so).
	w.equal("23. the network's available_balance, in cents", cents, []int{237, 237, 237})
}
