package stripesim

import (
	"fmt"
	"net/http"

	"github.com/stripe/stripe-go/v85"
)

// createAuthorization answers POST /v1/test_helpers/issuing/authorizations
// as Stripe's test helper does: a purchase on the card. Stripe declines at
// once on a card that is not active; otherwise it asks WebhookURL
// (issuing_authorization.request) and decides by the answer. Either way it
// emits issuing_authorization.created and answers the authorization.
func (s *Sim) createAuthorization(r *request) result {
	f := r.form
	if f.Get("card") == "" {
		return invalid("parameter_missing", "Missing required param: card.")
	}
	amount, hasAmount, bad := formInt(r, "amount")
	if bad.status != 0 {
		return bad
	}
	merchantAmount, hasMerchant, bad := formInt(r, "merchant_amount")
	if bad.status != 0 {
		return bad
	}
	switch {
	case !hasAmount && !hasMerchant:
		return invalid("parameter_missing", "Missing required param: amount.")
	case !hasAmount:
		amount = merchantAmount
	case !hasMerchant:
		merchantAmount = amount
	}
	if amount <= 0 {
		return invalid("parameter_invalid_integer", "This value must be greater than 0.")
	}
	currency := or(f.Get("currency"), "usd")
	if currency != "usd" {
		return invalid("parameter_invalid", "stripesim simulates usd cards only.")
	}
	merchantCurrency := stripe.Currency(or(f.Get("merchant_currency"), currency))
	controllable := formBool(r, "is_amount_controllable", false)
	m := func(k string) string { return f.Get("merchant_data[" + k + "]") }
	now := s.cfg.Now().Unix()

	s.mu.Lock()
	c, found := s.cards[f.Get("card")]
	if !found {
		s.mu.Unlock()
		return stripeError(http.StatusBadRequest, "", "resource_missing", fmt.Sprintf("No such issuing.card: '%s'", f.Get("card")))
	}
	a := &stripe.IssuingAuthorization{
		ID: newID("iauth_"), Object: "issuing.authorization", Created: now,
		Card: c, Cardholder: &stripe.IssuingCardholder{ID: c.Cardholder.ID},
		Currency: stripe.CurrencyUSD, MerchantCurrency: merchantCurrency,
		Status:              stripe.IssuingAuthorizationStatusPending,
		AuthorizationMethod: stripe.IssuingAuthorizationAuthorizationMethod(or(f.Get("authorization_method"), "online")),
		Wallet:              stripe.IssuingAuthorizationWallet(f.Get("wallet")),
		MerchantData: &stripe.IssuingAuthorizationMerchantData{
			Category: m("category"), CategoryCode: m("category_code"), City: m("city"), Country: m("country"),
			Name: m("name"), NetworkID: m("network_id"), PostalCode: m("postal_code"), State: m("state"),
			TaxID: m("tax_id"), TerminalID: m("terminal_id"), URL: m("url"),
		},
		Metadata: map[string]string{}, BalanceTransactions: []*stripe.BalanceTransaction{},
		RequestHistory: []*stripe.IssuingAuthorizationRequestHistory{}, Transactions: []*stripe.IssuingTransaction{},
		VerificationData: &stripe.IssuingAuthorizationVerificationData{
			AddressLine1Check: "not_provided", AddressPostalCodeCheck: "not_provided", CVCCheck: "match", ExpiryCheck: "match",
		},
	}
	history := &stripe.IssuingAuthorizationRequestHistory{
		Amount: amount, Currency: stripe.CurrencyUSD, MerchantAmount: merchantAmount, MerchantCurrency: merchantCurrency,
		Created: now, RequestedAt: now,
	}
	s.auths[a.ID] = a
	if c.Status != stripe.IssuingCardStatusActive {
		history.Reason = stripe.IssuingAuthorizationRequestHistoryReasonCardInactive
		if c.Status == stripe.IssuingCardStatusCanceled {
			history.Reason = stripe.IssuingAuthorizationRequestHistoryReasonCardCanceled
		}
		a.Status = stripe.IssuingAuthorizationStatusClosed
		a.RequestHistory = append(a.RequestHistory, history)
		s.emit(r, "issuing_authorization.created", authorizationJSON(a), nil)
		defer s.mu.Unlock()
		return ok(authorizationJSON(a))
	}
	a.PendingRequest = &stripe.IssuingAuthorizationPendingRequest{
		Amount: amount, Currency: stripe.CurrencyUSD, MerchantAmount: merchantAmount, MerchantCurrency: merchantCurrency,
		IsAmountControllable: controllable,
	}
	pending := authorizationJSON(a)
	s.mu.Unlock()

	d := s.ask(r.Context(), r, pending, controllable, amount)

	s.mu.Lock()
	defer s.mu.Unlock()
	a.PendingRequest = nil
	history.Approved, history.Reason = d.approved, d.reason
	if d.approved {
		a.Approved, a.Amount, a.MerchantAmount = true, amount, merchantAmount
		if d.amount != 0 {
			a.Amount, a.MerchantAmount = d.amount, d.amount*merchantAmount/amount
		}
	} else {
		a.Status = stripe.IssuingAuthorizationStatusClosed
	}
	for k, v := range d.metadata {
		a.Metadata[k] = v
	}
	a.RequestHistory = append(a.RequestHistory, history)
	s.emit(r, "issuing_authorization.created", authorizationJSON(a), nil)
	return ok(authorizationJSON(a))
}

// getAuthorization answers GET /v1/issuing/authorizations/{id}.
func (s *Sim) getAuthorization(r *request) result {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, found := s.auths[r.PathValue("id")]
	if !found {
		return missing("issuing.authorization", r.PathValue("id"))
	}
	return ok(authorizationJSON(a))
}

// getTransaction answers GET /v1/issuing/transactions/{id}.
func (s *Sim) getTransaction(r *request) result {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, found := s.txns[r.PathValue("id")]
	if !found {
		return missing("issuing.transaction", r.PathValue("id"))
	}
	return ok(transactionJSON(t))
}

// pendingAuthorization returns the authorization of the path, which must
// be pending. s.mu is held.
func (s *Sim) pendingAuthorization(r *request) (*stripe.IssuingAuthorization, result) {
	a, found := s.auths[r.PathValue("id")]
	if !found {
		return nil, missing("issuing.authorization", r.PathValue("id"))
	}
	if a.Status != stripe.IssuingAuthorizationStatusPending {
		return nil, invalid("", fmt.Sprintf("This authorization is %s; only a pending authorization can be changed.", a.Status))
	}
	return a, result{}
}

// previous is what an issuing_authorization.updated event says a was.
func previous(a *stripe.IssuingAuthorization) map[string]any {
	return map[string]any{"status": a.Status, "amount": a.Amount, "merchant_amount": a.MerchantAmount}
}

// capture answers POST /v1/test_helpers/issuing/authorizations/{id}/capture:
// a capture transaction of capture_amount (default: the amount held), whose
// amount is negative, money out; the authorization closes unless
// close_authorization=false. It emits issuing_transaction.created, then
// issuing_authorization.updated.
func (s *Sim) capture(r *request) result {
	amount, has, bad := formInt(r, "capture_amount")
	if bad.status != 0 {
		return bad
	}
	closing := formBool(r, "close_authorization", true)
	s.mu.Lock()
	defer s.mu.Unlock()
	a, bad := s.pendingAuthorization(r)
	if a == nil {
		return bad
	}
	if !has {
		amount = a.Amount
	}
	if amount <= 0 {
		return invalid("parameter_invalid_integer", "capture_amount must be greater than 0.")
	}
	prev := previous(a)
	t := s.transaction(a, stripe.IssuingTransactionTypeCapture, -amount)
	if closing {
		a.Status, a.Amount, a.MerchantAmount = stripe.IssuingAuthorizationStatusClosed, 0, 0
	} else {
		a.Amount, a.MerchantAmount = max(0, a.Amount-amount), max(0, a.MerchantAmount-amount)
	}
	s.emit(r, "issuing_transaction.created", transactionJSON(t), nil)
	s.emit(r, "issuing_authorization.updated", authorizationJSON(a), prev)
	return ok(authorizationJSON(a))
}

// transaction records a transaction of a, listed on it. s.mu is held.
func (s *Sim) transaction(a *stripe.IssuingAuthorization, typ stripe.IssuingTransactionType, amount int64) *stripe.IssuingTransaction {
	t := &stripe.IssuingTransaction{
		ID: newID("ipi_"), Object: "issuing.transaction", Created: s.cfg.Now().Unix(), Type: typ,
		Amount: amount, MerchantAmount: amount, Currency: stripe.CurrencyUSD, MerchantCurrency: a.MerchantCurrency,
		Authorization: &stripe.IssuingAuthorization{ID: a.ID}, Card: &stripe.IssuingCard{ID: a.Card.ID},
		Cardholder: &stripe.IssuingCardholder{ID: a.Cardholder.ID}, MerchantData: a.MerchantData,
		Metadata: map[string]string{}, Wallet: stripe.IssuingTransactionWallet(a.Wallet),
	}
	s.txns[t.ID] = t
	a.Transactions = append(a.Transactions, t)
	return t
}

// reverse answers POST /v1/test_helpers/issuing/authorizations/{id}/reverse:
// reverse_amount of the amount held, all of it when absent, which makes
// the authorization reversed. It emits issuing_authorization.updated.
func (s *Sim) reverse(r *request) result {
	amount, has, bad := formInt(r, "reverse_amount")
	if bad.status != 0 {
		return bad
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, bad := s.pendingAuthorization(r)
	if a == nil {
		return bad
	}
	if !has {
		amount = a.Amount
	}
	if amount <= 0 || amount > a.Amount {
		return invalid("parameter_invalid_integer", fmt.Sprintf("reverse_amount must be between 1 and the amount held, %d.", a.Amount))
	}
	prev := previous(a)
	if amount == a.Amount {
		a.Status, a.Amount, a.MerchantAmount = stripe.IssuingAuthorizationStatusReversed, 0, 0
	} else {
		a.Amount, a.MerchantAmount = a.Amount-amount, max(0, a.MerchantAmount-amount)
	}
	s.emit(r, "issuing_authorization.updated", authorizationJSON(a), prev)
	return ok(authorizationJSON(a))
}

// expire answers POST /v1/test_helpers/issuing/authorizations/{id}/expire:
// the authorization expires, holding nothing. It emits
// issuing_authorization.updated.
func (s *Sim) expire(r *request) result {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, bad := s.pendingAuthorization(r)
	if a == nil {
		return bad
	}
	prev := previous(a)
	a.Status, a.Amount, a.MerchantAmount = stripe.IssuingAuthorizationStatusExpired, 0, 0
	s.emit(r, "issuing_authorization.updated", authorizationJSON(a), prev)
	return ok(authorizationJSON(a))
}

// refund answers POST /v1/test_helpers/issuing/transactions/{id}/refund: a
// refund transaction of refund_amount (default: what is left of the
// capture), positive, money in, of the same authorization and card. It
// emits issuing_transaction.created and answers the refund.
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
	a := s.auths[t.Authorization.ID]
	left := -t.Amount
	for _, o := range a.Transactions {
		if o.Type == stripe.IssuingTransactionTypeRefund && s.refundOf[o.ID] == t.ID {
			left -= o.Amount
		}
	}
	if !has {
		amount = left
	}
	if amount <= 0 || amount > left {
		return invalid("parameter_invalid_integer", fmt.Sprintf("refund_amount must be between 1 and what is left to refund, %d.", left))
	}
	rt := s.transaction(a, stripe.IssuingTransactionTypeRefund, amount)
	s.refundOf[rt.ID] = t.ID
	s.emit(r, "issuing_transaction.created", transactionJSON(rt), nil)
	return ok(transactionJSON(rt))
}
