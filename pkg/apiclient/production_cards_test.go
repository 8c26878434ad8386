package apiclient_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"payments/pkg/apiclient"
	"payments/pkg/waittest"
)

// stripeHelper posts form to the simulated Stripe Issuing at path (one of
// Stripe's test helpers), with its secret key, as the README's curl does,
// and returns the object it answers.
func (w *walk) stripeHelper(step, issuerURL, key, path string, form url.Values) map[string]any {
	w.t.Helper()
	req, err := http.NewRequestWithContext(w.ctx, http.MethodPost, issuerURL+path, strings.NewReader(form.Encode()))
	if err != nil {
		w.t.Fatal(err)
	}
	req.SetBasicAuth(key, "")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatalf("%s: %v", step, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var out map[string]any
	if res.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil {
		w.t.Fatalf("%s: %d %s", step, res.StatusCode, b)
	}
	return out
}

// rawCard reads card id with the issuer's record of it.
func (w *walk) rawCard(step, id string) (apiclient.CardDetail, map[string]any) {
	w.t.Helper()
	res, err := w.c.GetCardWithResponse(w.ctx, id, &apiclient.GetCardParams{IncludeRaw: ptr(true)}, w.auth)
	w.ok(res, err, http.StatusOK, step+": read the card with the issuer's record")
	var body struct{ Data struct{ Raw map[string]any } }
	if err := json.Unmarshal(res.Body, &body); err != nil || body.Data.Raw == nil {
		w.t.Fatalf("%s: no raw card in %s (%v)", step, res.Body, err)
	}
	return res.JSON200.Data, body.Data.Raw
}

// productionCards runs the README's production card steps, P7 to P11: a
// card issued at Stripe Issuing (here the simulated one, at issuerURL, its
// key key) for the customer verified in P6, funded; purchases through
// Stripe's test helper, decided in the response to
// issuing_authorization.request; the capture and a refund through Stripe's
// events; a freeze, Stripe declining on its own; the termination.
func (w *walk) productionCards(issuerURL, key, customerID string) {
	usd, err := w.c.CreateWalletWithResponse(w.ctx, apiclient.CreateWalletJSONRequestBody{
		Currency: "USD", Country: "United States", CountryIsoCode: "US", CountryPhoneCode: "+1"}, w.auth)
	w.ok(usd, err, http.StatusCreated, "P7. create the USD wallet")
	usdWallet := usd.JSON201.Data.Id.String()
	credit, err := w.c.CreditWalletWithResponse(w.ctx, usdWallet, apiclient.CreditWalletJSONRequestBody{
		Balance: "payout", Amount: "100", Reference: "live-usd-0001"}, adminKey)
	w.ok(credit, err, http.StatusOK, "P7. credit the USD wallet")
	issued, err := w.c.IssueCardWithResponse(w.ctx, nil, apiclient.IssueCardJSONRequestBody{CustomerId: customerID, Amount: "20"}, w.auth)
	w.ok(issued, err, http.StatusCreated, "P7. issue a card at Stripe")
	id := issued.JSON201.Data.Id.String()
	card, raw := w.rawCard("P7", id)
	w.equal("P7. status", card.Status, "ACTIVE")
	w.equal("P7. brand", card.Brand, "VISA")
	w.equal("P7. Stripe's card", strings.HasPrefix(raw["id"].(string), "ic_"), true)
	w.equal("P7. Stripe's balance", raw["balance"], nil)
	masked := raw["masked_number"].(string)
	w.equal("P7. Stripe's last 4", strings.HasSuffix(*card.MaskedPan, masked[len(masked)-4:]), true)
	stripeCard := raw["id"].(string)

	fund, err := w.c.FundCardWithResponse(w.ctx, id, nil, apiclient.FundCardJSONRequestBody{Amount: "5"}, w.auth)
	w.ok(fund, err, http.StatusOK, "P8. fund the card")
	w.equal("P8. balance", w.card("P8", id).Balance, "25")

	purchase := func(amount string) url.Values {
		return url.Values{"card": {stripeCard}, "amount": {amount}, "currency": {"usd"},
			"merchant_data[name]": {"Book Shop"}, "merchant_data[city]": {"Austin"}, "merchant_data[country]": {"US"}}
	}
	const helper = "/v1/test_helpers/issuing/authorizations"
	approved := w.stripeHelper("P9. a purchase of 12.50", issuerURL, key, helper, purchase("1250"))
	w.equal("P9. approved in the response", approved["approved"], true)
	w.equal("P9. our transaction", approved["metadata"].(map[string]any)["transaction_id"] != nil, true)
	declined := w.stripeHelper("P9. a purchase of 20.00", issuerURL, key, helper, purchase("2000"))
	w.equal("P9. declined in the response", declined["approved"], false)
	w.equal("P9. our reason", declined["metadata"].(map[string]any)["decline_reason"], "insufficient_funds")
	card = w.card("P9", id)
	w.equal("P9. balance, available", card.Balance+" "+card.AvailableBalance, "24.5 12")

	authID := approved["id"].(string)
	captured := w.stripeHelper("P10. capture", issuerURL, key, helper+"/"+authID+"/capture", url.Values{"capture_amount": {"1250"}})
	capture := captured["transactions"].([]any)[0].(map[string]any)["id"].(string)
	w.stripeHelper("P10. refund 2.00", issuerURL, key, "/v1/test_helpers/issuing/transactions/"+capture+"/refund", url.Values{"refund_amount": {"200"}})
	waittest.Until(w.t, 30*time.Second, "P10. the capture and the refund applied", func() bool {
		c := w.card("P10", id)
		return c.Balance == "14" && c.AvailableBalance == "14"
	})
	txs, err := w.c.ListCardTransactionsWithResponse(w.ctx, id, nil, w.auth)
	w.ok(txs, err, http.StatusOK, "P10. the card's transactions")
	var types []string
	for _, tx := range txs.JSON200.Data {
		types = append(types, string(tx.Type))
	}
	for _, want := range []string{"AUTHORIZATION", "DECLINE", "SETTLEMENT", "REFUND"} {
		w.equal("P10. a "+want, strings.Contains(strings.Join(types, " "), want), true)
	}

	frozen, err := w.c.FreezeCardWithResponse(w.ctx, id, nil, w.auth)
	w.ok(frozen, err, http.StatusOK, "P11. freeze it")
	_, raw = w.rawCard("P11", id)
	w.equal("P11. frozen at Stripe", raw["status"], "FROZEN")
	refused := w.stripeHelper("P11. a purchase on the frozen card", issuerURL, key, helper, purchase("100"))
	w.equal("P11. declined by Stripe", refused["approved"], false)
	w.equal("P11. unchanged", w.card("P11", id).Balance, "14")
	unfrozen, err := w.c.UnfreezeCardWithResponse(w.ctx, id, nil, w.auth)
	w.ok(unfrozen, err, http.StatusOK, "P11. unfreeze it")
	terminated, err := w.c.TerminateCardWithResponse(w.ctx, id, nil, apiclient.TerminateCardJSONRequestBody{}, w.auth)
	w.ok(terminated, err, http.StatusOK, "P11. terminate it")
	_, raw = w.rawCard("P11", id)
	w.equal("P11. canceled at Stripe", raw["status"], "TERMINATED")
	wallets, err := w.c.ListWalletsWithResponse(w.ctx, w.auth)
	w.ok(wallets, err, http.StatusOK, "P11. the wallets")
	for _, wl := range wallets.JSON200.Data {
		if wl.Id.String() == usdWallet {
			// 100, less 20 and 1 of issuance fee, 5 funded, 0.50 of
			// failed-payment fee's share the card paid; 14 back.
			w.equal("P11. the USD wallet", wl.PayoutBalance, "88")
		}
	}
}
