package stripesim

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/stripe/stripe-go/v85"
)

// createAuthorization answers POST /v1/test_helpers/issuing/authorizations
// as Stripe's test helper does: a purchase on the card. Stripe declines at
// once on a card that is not active; otherwise it asks WebhookURL
// (issuing_authorization.request) and decides by the answer (by
// Config.StandIn when it is late or fails). Either way it emits
// issuing_authorization.created and answers the authorization; an approval
// holds its amount of the Issuing balance.
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
		MerchantData:        merchantData(r),
		Metadata:            map[string]string{}, BalanceTransactions: []*stripe.BalanceTransaction{},
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
	s.authList = append(s.authList, a)
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
		a.Approved, a.MerchantAmount = true, merchantAmount
		held := amount
		if d.amount != 0 {
			held, a.MerchantAmount = d.amount, d.amount*merchantAmount/amount
		}
		s.hold(a, held)
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

// hold makes a hold held, the Issuing balance paying the difference.
// s.mu is held.
func (s *Sim) hold(a *stripe.IssuingAuthorization, held int64) {
	s.balance -= held - a.Amount
	a.Amount = held
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

// authorizationOf returns the authorization of the path, which must be
// approved and in one of statuses. s.mu is held.
func (s *Sim) authorizationOf(r *request, statuses ...stripe.IssuingAuthorizationStatus) (*stripe.IssuingAuthorization, result) {
	a, found := s.auths[r.PathValue("id")]
	if !found {
		return nil, missing("issuing.authorization", r.PathValue("id"))
	}
	if !a.Approved || !slices.Contains(statuses, a.Status) {
		return nil, invalid("", fmt.Sprintf("This authorization is %s (approved: %v); only an approved authorization %v can be changed this way.", a.Status, a.Approved, statuses))
	}
	return a, result{}
}

// updated emits issuing_authorization.updated about a, which was before
// (its JSON), when it changed. s.mu is held.
func (s *Sim) updated(r *request, a *stripe.IssuingAuthorization, before []byte) {
	after := authorizationJSON(a)
	if prev := changes(before, after); len(prev) > 0 {
		s.emit(r, "issuing_authorization.updated", after, prev)
	}
}

// reverse answers POST /v1/test_helpers/issuing/authorizations/{id}/reverse:
// reverse_amount of the amount held, all of it when absent, which makes
// the authorization reversed; a part leaves it pending, holding the rest.
// It emits issuing_authorization.updated.
func (s *Sim) reverse(r *request) result {
	amount, has, bad := formInt(r, "reverse_amount")
	if bad.status != 0 {
		return bad
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, bad := s.authorizationOf(r, stripe.IssuingAuthorizationStatusPending)
	if a == nil {
		return bad
	}
	if !has {
		amount = a.Amount
	}
	if amount <= 0 || amount > a.Amount {
		return invalid("parameter_invalid_integer", fmt.Sprintf("reverse_amount must be between 1 and the amount held, %d.", a.Amount))
	}
	before := authorizationJSON(a)
	if amount == a.Amount {
		a.Status, a.MerchantAmount = stripe.IssuingAuthorizationStatusReversed, 0
	} else {
		a.MerchantAmount = max(0, a.MerchantAmount-amount)
	}
	s.hold(a, a.Amount-amount)
	s.updated(r, a, before)
	return ok(authorizationJSON(a))
}

// expire answers POST /v1/test_helpers/issuing/authorizations/{id}/expire:
// the authorization expires, holding nothing, and stays capturable (Stripe's
// expired, since 2025-03-31). It emits issuing_authorization.updated.
func (s *Sim) expire(r *request) result {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, bad := s.authorizationOf(r, stripe.IssuingAuthorizationStatusPending)
	if a == nil {
		return bad
	}
	before := authorizationJSON(a)
	a.Status, a.MerchantAmount = stripe.IssuingAuthorizationStatusExpired, 0
	s.hold(a, 0)
	s.updated(r, a, before)
	return ok(authorizationJSON(a))
}

// finalizeAmount answers POST
// /v1/test_helpers/issuing/authorizations/{id}/finalize_amount: a fuel
// dispenser's final amount, at most the amount held, which the
// authorization holds from then on, pending. It emits
// issuing_authorization.updated when the amount changed.
func (s *Sim) finalizeAmount(r *request) result {
	final, has, bad := formInt(r, "final_amount")
	if bad.status != 0 {
		return bad
	}
	if !has {
		return invalid("parameter_missing", "Missing required param: final_amount.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, bad := s.authorizationOf(r, stripe.IssuingAuthorizationStatusPending)
	if a == nil {
		return bad
	}
	if final < 0 || final > a.Amount {
		return invalid("parameter_invalid_integer", fmt.Sprintf("final_amount must be between 0 and the amount held, %d.", a.Amount))
	}
	before := authorizationJSON(a)
	a.MerchantAmount = max(0, a.MerchantAmount-(a.Amount-final))
	s.hold(a, final)
	s.updated(r, a, before)
	return ok(authorizationJSON(a))
}

// increment answers POST
// /v1/test_helpers/issuing/authorizations/{id}/increment: the merchant asks
// for increment_amount more on a pending authorization. Stripe asks
// WebhookURL again (issuing_authorization.request, the pending request's
// amount the increment), and decides by the answer, or by Config.StandIn
// when it is late or fails: an approval adds to the hold. The request joins
// the request history either way, and it emits
// issuing_authorization.updated.
func (s *Sim) increment(r *request) result {
	inc, has, bad := formInt(r, "increment_amount")
	if bad.status != 0 {
		return bad
	}
	if !has || inc <= 0 {
		return invalid("parameter_invalid_integer", "increment_amount must be greater than 0.")
	}
	controllable := formBool(r, "is_amount_controllable", false)
	s.mu.Lock()
	a, bad := s.authorizationOf(r, stripe.IssuingAuthorizationStatusPending)
	if a == nil {
		s.mu.Unlock()
		return bad
	}
	before := authorizationJSON(a)
	now := s.cfg.Now().Unix()
	a.PendingRequest = &stripe.IssuingAuthorizationPendingRequest{
		Amount: inc, Currency: stripe.CurrencyUSD, MerchantAmount: inc, MerchantCurrency: a.MerchantCurrency,
		IsAmountControllable: controllable,
	}
	pending := authorizationJSON(a)
	s.mu.Unlock()

	d := s.ask(r.Context(), r, pending, controllable, inc)

	s.mu.Lock()
	defer s.mu.Unlock()
	a.PendingRequest = nil
	history := &stripe.IssuingAuthorizationRequestHistory{
		Amount: inc, Currency: stripe.CurrencyUSD, MerchantAmount: inc, MerchantCurrency: a.MerchantCurrency,
		Approved: d.approved, Reason: d.reason, Created: now, RequestedAt: now,
	}
	if d.approved && a.Status == stripe.IssuingAuthorizationStatusPending {
		if d.amount != 0 {
			inc = d.amount
		}
		a.MerchantAmount += inc
		s.hold(a, a.Amount+inc)
	}
	a.RequestHistory = append(a.RequestHistory, history)
	s.updated(r, a, before)
	return ok(authorizationJSON(a))
}
