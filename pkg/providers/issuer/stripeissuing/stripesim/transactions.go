package stripesim

import (
	"fmt"
	"net/http"

	"github.com/stripe/stripe-go/v85"
)

// getTransaction answers GET /v1/issuing/transactions/{id}.
func (s *Sim) getTransaction(r *request) result {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, found := s.txns[r.PathValue("id")]
	if !found {
		return missing("issuing.transaction", r.PathValue("id"))
	}
	var card *stripe.IssuingCard
	if expanded(r, "card") {
		card = s.cards[t.Card.ID]
	}
	return ok(transactionJSON(t, card))
}

// capture answers POST /v1/test_helpers/issuing/authorizations/{id}/capture:
// a capture transaction of capture_amount (default: the amount held; more
// than held is an over-capture, which captures always allow), whose amount
// is negative, money out of the Issuing balance. The authorization, pending
// or expired (still capturable), closes, releasing what it held, unless
// close_authorization=false: then it stays pending, holding what the
// capture left of its hold, for further captures. It emits
// issuing_transaction.created, then issuing_authorization.updated.
func (s *Sim) capture(r *request) result {
	amount, has, bad := formInt(r, "capture_amount")
	if bad.status != 0 {
		return bad
	}
	closing := formBool(r, "close_authorization", true)
	s.mu.Lock()
	defer s.mu.Unlock()
	a, bad := s.authorizationOf(r, stripe.IssuingAuthorizationStatusPending, stripe.IssuingAuthorizationStatusExpired)
	if a == nil {
		return bad
	}
	if !has {
		amount = a.Amount
	}
	if amount <= 0 {
		return invalid("parameter_invalid_integer", "capture_amount must be greater than 0.")
	}
	before := authorizationJSON(a)
	t := s.transaction(a.Card, a, stripe.IssuingTransactionTypeCapture, -amount, a.MerchantData)
	if closing {
		a.Status, a.MerchantAmount = stripe.IssuingAuthorizationStatusClosed, 0
		s.hold(a, 0)
	} else {
		a.MerchantAmount = max(0, a.MerchantAmount-amount)
		s.hold(a, max(0, a.Amount-amount))
	}
	s.emit(r, "issuing_transaction.created", transactionJSON(t, nil), nil)
	s.updated(r, a, before)
	return ok(authorizationJSON(a))
}

// transaction records a transaction of amount (negative: money out) on
// card, of authorization a (nil for none), and moves the Issuing balance
// by its amount. s.mu is held.
func (s *Sim) transaction(card *stripe.IssuingCard, a *stripe.IssuingAuthorization, typ stripe.IssuingTransactionType, amount int64, m *stripe.IssuingAuthorizationMerchantData) *stripe.IssuingTransaction {
	t := &stripe.IssuingTransaction{
		ID: newID("ipi_"), Object: "issuing.transaction", Created: s.cfg.Now().Unix(), Type: typ,
		Amount: amount, MerchantAmount: amount, Currency: stripe.CurrencyUSD, MerchantCurrency: stripe.CurrencyUSD,
		Card: &stripe.IssuingCard{ID: card.ID}, Cardholder: &stripe.IssuingCardholder{ID: card.Cardholder.ID},
		MerchantData: m, Metadata: map[string]string{},
	}
	if a != nil {
		t.Authorization = &stripe.IssuingAuthorization{ID: a.ID}
		t.MerchantCurrency, t.Wallet = a.MerchantCurrency, stripe.IssuingTransactionWallet(a.Wallet)
		a.Transactions = append(a.Transactions, t)
	}
	s.txns[t.ID] = t
	s.txnList = append(s.txnList, t)
	s.balance += amount
	return t
}

// refund answers POST /v1/test_helpers/issuing/transactions/{id}/refund: a
// refund transaction of refund_amount (default: what is left of the
// capture), positive, money in, of the same authorization (if any) and
// card. It emits issuing_transaction.created and answers the refund.
func (s *Sim) refund(r *request) result {
	amount, has, bad := formInt(r, "refund_amount")
	if bad.status != 0 {
		return bad
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, found := s.txns[r.PathValue("id")]
	if !found {
		return missing("issuing.transaction", r.PathValue("id"))
	}
	if t.Type != stripe.IssuingTransactionTypeCapture {
		return invalid("", "Only a capture transaction can be refunded.")
	}
	left := -t.Amount - s.refunded(t)
	if !has {
		amount = left
	}
	if amount <= 0 || amount > left {
		return invalid("parameter_invalid_integer", fmt.Sprintf("refund_amount must be between 1 and what is left to refund, %d.", left))
	}
	var a *stripe.IssuingAuthorization
	if t.Authorization != nil {
		a = s.auths[t.Authorization.ID]
	}
	rt := s.transaction(s.cards[t.Card.ID], a, stripe.IssuingTransactionTypeRefund, amount, t.MerchantData)
	s.refundOf[rt.ID] = t.ID
	s.emit(r, "issuing_transaction.created", transactionJSON(rt, nil), nil)
	return ok(transactionJSON(rt, nil))
}

// refunded is what the refunds of capture t gave back. s.mu is held.
func (s *Sim) refunded(t *stripe.IssuingTransaction) int64 {
	var sum int64
	for id, of := range s.refundOf {
		if of == t.ID {
			sum += s.txns[id].Amount
		}
	}
	return sum
}

// forceCapture answers POST
// /v1/test_helpers/issuing/transactions/create_force_capture: a capture of
// amount on the card with no authorization (the merchant forced it), which
// no control stops. It emits issuing_transaction.created.
func (s *Sim) forceCapture(r *request) result {
	return s.unlinked(r, stripe.IssuingTransactionTypeCapture)
}

// unlinkedRefund answers POST
// /v1/test_helpers/issuing/transactions/create_unlinked_refund: a refund
// of amount on the card linked to no authorization. It emits
// issuing_transaction.created.
func (s *Sim) unlinkedRefund(r *request) result {
	return s.unlinked(r, stripe.IssuingTransactionTypeRefund)
}

// unlinked records a transaction of type typ with no authorization.
func (s *Sim) unlinked(r *request, typ stripe.IssuingTransactionType) result {
	amount, has, bad := formInt(r, "amount")
	if bad.status != 0 {
		return bad
	}
	if !has || amount <= 0 {
		return invalid("parameter_invalid_integer", "amount must be greater than 0.")
	}
	if c := or(r.form.Get("currency"), "usd"); c != "usd" {
		return invalid("parameter_invalid", "stripesim simulates usd cards only.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, found := s.cards[r.form.Get("card")]
	if !found {
		return stripeError(http.StatusBadRequest, "", "resource_missing", fmt.Sprintf("No such issuing.card: '%s'", r.form.Get("card")))
	}
	if typ == stripe.IssuingTransactionTypeCapture {
		amount = -amount
	}
	t := s.transaction(c, nil, typ, amount, merchantData(r))
	s.emit(r, "issuing_transaction.created", transactionJSON(t, nil), nil)
	return ok(transactionJSON(t, nil))
}

// merchantData is the form's merchant_data.
func merchantData(r *request) *stripe.IssuingAuthorizationMerchantData {
	m := func(k string) string { return r.form.Get("merchant_data[" + k + "]") }
	return &stripe.IssuingAuthorizationMerchantData{
		Category: m("category"), CategoryCode: m("category_code"), City: m("city"), Country: m("country"),
		Name: m("name"), NetworkID: m("network_id"), PostalCode: m("postal_code"), State: m("state"),
		TaxID: m("tax_id"), TerminalID: m("terminal_id"), URL: m("url"),
	}
}
