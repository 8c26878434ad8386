package stripesim

import (
	"fmt"
	"maps"
	"net/http"

	"github.com/stripe/stripe-go/v85"
)

// createCardholder answers POST /v1/issuing/cardholders.
func (s *Sim) createCardholder(r *request) result {
	f := r.form
	for _, p := range []string{"name", "billing[address][line1]", "billing[address][city]", "billing[address][postal_code]", "billing[address][country]"} {
		if f.Get(p) == "" {
			return invalid("parameter_missing", "Missing required param: "+p+".")
		}
	}
	h := &stripe.IssuingCardholder{
		ID: newID("ich_"), Object: "issuing.cardholder", Created: s.cfg.Now().Unix(),
		Name: f.Get("name"), Email: f.Get("email"), PhoneNumber: f.Get("phone_number"),
		Type:   stripe.IssuingCardholderType(or(f.Get("type"), "individual")),
		Status: stripe.IssuingCardholderStatus(or(f.Get("status"), "active")),
		Billing: &stripe.IssuingCardholderBilling{Address: &stripe.Address{
			Line1: f.Get("billing[address][line1]"), Line2: f.Get("billing[address][line2]"),
			City: f.Get("billing[address][city]"), State: f.Get("billing[address][state]"),
			PostalCode: f.Get("billing[address][postal_code]"), Country: f.Get("billing[address][country]"),
		}},
		Metadata:     map[string]string{},
		Requirements: &stripe.IssuingCardholderRequirements{PastDue: []string{}},
	}
	if first, last := f.Get("individual[first_name]"), f.Get("individual[last_name]"); first != "" || last != "" {
		h.Individual = &stripe.IssuingCardholderIndividual{FirstName: first, LastName: last}
	}
	if bad := applyMetadata(r, h.Metadata); bad.status != 0 {
		return bad
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cardholders[h.ID] = h
	s.emit(r, "issuing_cardholder.created", encode(h, nil, nil), nil)
	return ok(encode(h, nil, nil))
}

// getCardholder answers GET /v1/issuing/cardholders/{id}.
func (s *Sim) getCardholder(r *request) result {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, found := s.cardholders[r.PathValue("id")]
	if !found {
		return missing("issuing.cardholder", r.PathValue("id"))
	}
	return ok(encode(h, nil, nil))
}

// createCard answers POST /v1/issuing/cards: a virtual USD card, inactive
// unless asked otherwise, as Stripe makes it.
func (s *Sim) createCard(r *request) result {
	f := r.form
	for _, p := range []string{"cardholder", "currency", "type"} {
		if f.Get(p) == "" {
			return invalid("parameter_missing", "Missing required param: "+p+".")
		}
	}
	if f.Get("type") != "virtual" || f.Get("currency") != "usd" {
		return invalid("parameter_invalid", "stripesim issues only virtual cards in usd.")
	}
	status := or(f.Get("status"), "inactive")
	if status != "active" && status != "inactive" {
		return invalid("parameter_invalid", "Invalid status: must be one of active or inactive.")
	}
	now := s.cfg.Now().UTC()
	s.mu.Lock()
	defer s.mu.Unlock()
	h, found := s.cardholders[f.Get("cardholder")]
	if !found {
		return stripeError(http.StatusBadRequest, "", "resource_missing", fmt.Sprintf("No such issuing.cardholder: '%s'", f.Get("cardholder")))
	}
	s.cardCount++
	number := luhn(fmt.Sprintf("400000%09d", s.cardCount))
	c := &stripe.IssuingCard{
		ID: newID("ic_"), Object: "issuing.card", Created: now.Unix(),
		Brand: "Visa", Cardholder: h, Currency: stripe.CurrencyUSD,
		Type: stripe.IssuingCardTypeVirtual, Status: stripe.IssuingCardStatus(status),
		Number: number, Last4: number[len(number)-4:], CVC: fmt.Sprintf("%03d", (s.cardCount*137)%1000),
		ExpMonth: int64(now.Month()), ExpYear: int64(now.Year() + 3),
		Metadata: map[string]string{},
		SpendingControls: &stripe.IssuingCardSpendingControls{
			AllowedCategories: []string{}, BlockedCategories: []string{}, SpendingLimits: []*stripe.IssuingCardSpendingControlsSpendingLimit{},
		},
		Wallets: &stripe.IssuingCardWallets{
			ApplePay: &stripe.IssuingCardWalletsApplePay{IneligibleReason: "missing_cardholder_contact"}, GooglePay: &stripe.IssuingCardWalletsGooglePay{IneligibleReason: "missing_cardholder_contact"},
		},
	}
	if bad := applyMetadata(r, c.Metadata); bad.status != 0 {
		s.cardCount--
		return bad
	}
	s.cards[c.ID] = c
	s.emit(r, "issuing_card.created", cardJSON(c, false, false), nil)
	return ok(cardJSON(c, expanded(r, "number"), expanded(r, "cvc")))
}

// getCard answers GET /v1/issuing/cards/{id}.
func (s *Sim) getCard(r *request) result {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, found := s.cards[r.PathValue("id")]
	if !found {
		return missing("issuing.card", r.PathValue("id"))
	}
	return ok(cardJSON(c, expanded(r, "number"), expanded(r, "cvc")))
}

// updateCard answers POST /v1/issuing/cards/{id}: its status (active,
// inactive, or canceled for good), cancellation reason and metadata. A
// change emits issuing_card.updated with what was before.
func (s *Sim) updateCard(r *request) result {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, found := s.cards[r.PathValue("id")]
	if !found {
		return missing("issuing.card", r.PathValue("id"))
	}
	if c.Status == stripe.IssuingCardStatusCanceled {
		return invalid("", "This card has been canceled and cannot be updated.")
	}
	st := stripe.IssuingCardStatus(r.form.Get("status"))
	switch st {
	case "", stripe.IssuingCardStatusActive, stripe.IssuingCardStatusInactive, stripe.IssuingCardStatusCanceled:
	default:
		return invalid("parameter_invalid", "Invalid status: must be one of active, inactive or canceled.")
	}
	metadata := maps.Clone(c.Metadata)
	if bad := applyMetadata(r, metadata); bad.status != 0 {
		return bad
	}
	prev := map[string]any{}
	if st != "" && st != c.Status {
		prev["status"] = c.Status
		c.Status = st
	}
	if reason := r.form.Get("cancellation_reason"); reason != "" && reason != string(c.CancellationReason) {
		prev["cancellation_reason"] = nullable(string(c.CancellationReason))
		c.CancellationReason = stripe.IssuingCardCancellationReason(reason)
	}
	if !maps.Equal(metadata, c.Metadata) {
		prev["metadata"] = c.Metadata
		c.Metadata = metadata
	}
	if len(prev) > 0 {
		s.emit(r, "issuing_card.updated", cardJSON(c, false, false), prev)
	}
	return ok(cardJSON(c, expanded(r, "number"), expanded(r, "cvc")))
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// nullable is v, or JSON's null for "".
func nullable(v string) any {
	if v == "" {
		return nil
	}
	return v
}
