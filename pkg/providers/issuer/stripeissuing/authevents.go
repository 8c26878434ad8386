package stripeissuing

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	stripe "github.com/stripe/stripe-go/v85"

	"payments/pkg/providers/issuer"
)

// The claims of what an authorization's updates move on its hold
// (issuer.NetworkTransaction.ID): the authorization's id and a suffix, so
// that none is the authorization's own (its advice's), and each is the
// same whatever reports the change (the event, its redelivery, a
// statement of the authorization as it is now).

// ReleaseID claims the release of what is left of authorization id's hold
// once Stripe made it status (closed, reversed or expired).
func ReleaseID(id string, status stripe.IssuingAuthorizationStatus) string {
	return id + "#" + string(status)
}

// ReversalID claims a partial reversal (a merchant's, a fuel
// dispenser's final amount) that left authorization id holding held.
func ReversalID(id string, held int64) string {
	return fmt.Sprintf("%s#reversal#%d", id, held)
}

// IncrementID claims an increment of authorization id, approved without
// us, that left it holding held.
func IncrementID(id string, held int64) string {
	return fmt.Sprintf("%s#increment#%d", id, held)
}

// Reasons of the reversals an authorization's update makes: its status
// when it releases what is left of the hold.
const (
	// ReasonClosed releases what is left once the authorization closed,
	// by its last capture (which Stripe reports apart, in any order) or
	// by Stripe.
	ReasonClosed = string(stripe.IssuingAuthorizationStatusClosed)
	// ReasonReversed releases what is left once the merchant reversed the
	// authorization.
	ReasonReversed = string(stripe.IssuingAuthorizationStatusReversed)
	// ReasonExpired releases what is left once Stripe expired the
	// authorization, which stays capturable.
	ReasonExpired = string(stripe.IssuingAuthorizationStatusExpired)
	// ReasonPartialReversal is a reversal of part of a pending hold.
	ReasonPartialReversal = "partial_reversal"
)

// authorization maps an authorization's creation (Stripe's decision,
// after ours or without it) and its updates (its end, a change of what it
// holds).
func (e *Event) authorization(ev stripe.Event) error {
	var a stripe.IssuingAuthorization
	if err := json.Unmarshal(ev.Data.Raw, &a); err != nil {
		return err
	}
	card, ref, err := authorizationCard(&a)
	if err != nil {
		return err
	}
	if ref == "" {
		e.Ignored = "an authorization of a card that is none of ours"
		return nil
	}
	n := issuer.Notification{ID: e.ID, CardID: card, Reference: ref, CreatedAt: created(ev)}
	if e.Type == EventAuthorizationUpdated {
		return e.authorizationUpdated(&a, ev.Data.PreviousAttributes, n)
	}
	return e.authorizationCreated(&a, n)
}

// authorizationCreated maps Stripe's decision onto an advice: an approval
// (ApprovedWithoutUs when the decision was not our answer's: Stripe's or
// the network's stand-in, a timeout set to approve, no request to us), a
// decline of ours (its reason from the metadata Stripe copied from our
// answer), or Stripe's stand-in decline when our answer was late or
// failed. A decline Stripe made without asking us holds nothing here.
func (e *Event) authorizationCreated(a *stripe.IssuingAuthorization, n issuer.Notification) error {
	h := last(a.RequestHistory)
	amount := a.Amount
	if h != nil {
		amount = h.Amount
	}
	n.Type, n.Decision = issuer.NotifyAdvice, issuer.Approved
	switch {
	case a.Approved && (h == nil || h.Reason != stripe.IssuingAuthorizationRequestHistoryReasonWebhookApproved):
		// What Stripe holds, whoever approved.
		n.Reason, amount = issuer.ApprovedWithoutUs, a.Amount
	case !a.Approved:
		n.Decision = issuer.Declined
		switch {
		case h == nil:
			return errors.New("a decline without its request_history")
		case h.Reason == stripe.IssuingAuthorizationRequestHistoryReasonWebhookTimeout,
			h.Reason == stripe.IssuingAuthorizationRequestHistoryReasonWebhookError:
			n.Reason = issuer.StandInReason
		case h.Reason == stripe.IssuingAuthorizationRequestHistoryReasonWebhookDeclined:
			n.Reason = a.Metadata[MetadataDeclineReason]
		default:
			e.Ignored = "declined by Stripe without asking us (" + string(h.Reason) + "): nothing is held here"
			return nil
		}
	}
	m := merchant(a.MerchantData)
	n.Transaction = &issuer.NetworkTransaction{
		ID: a.ID, Kind: kind(amount), Amount: amount, Currency: strings.ToUpper(string(a.Currency)), Merchant: &m,
	}
	return e.notify(n)
}

// authorizationUpdated maps a change of an approved authorization: its
// end (closed by its last capture or by Stripe, reversed by the merchant,
// expired by Stripe and still capturable) onto a reversal of what is left
// of its hold, nothing when the captures took it all; a pending one's
// amount lowered (a partial reversal, a final amount) onto a reversal of
// the difference, raised (an increment Stripe or the network approved)
// onto an approval without us of the difference, which names the
// authorization it adds to. An amount lowered by a capture (its update
// names the transactions among what changed) is the capture's: its
// issuing_transaction.created settles it. prev is the event's
// previous_attributes.
func (e *Event) authorizationUpdated(a *stripe.IssuingAuthorization, prev map[string]any, n issuer.Notification) error {
	currency := strings.ToUpper(string(a.Currency))
	switch a.Status {
	case stripe.IssuingAuthorizationStatusClosed, stripe.IssuingAuthorizationStatusReversed, stripe.IssuingAuthorizationStatusExpired:
		if !a.Approved {
			e.Ignored = "a declined authorization " + string(a.Status) + ": it held nothing"
			return nil
		}
		n.Type, n.Reason = issuer.NotifyReversal, string(a.Status) // ReasonClosed, ReasonReversed, ReasonExpired
		n.Transaction = &issuer.NetworkTransaction{ID: ReleaseID(a.ID, a.Status), AuthorizationID: a.ID, Currency: currency}
		return e.notify(n)
	case stripe.IssuingAuthorizationStatusPending:
	default:
		e.Ignored = fmt.Sprintf("an authorization now %q", a.Status)
		return nil
	}
	was, changed := previousAmount(prev)
	_, captured := prev["transactions"]
	switch {
	case !changed || was == a.Amount:
		e.Ignored = "a pending authorization whose hold did not change"
		return nil
	case a.Amount < was && captured:
		e.Ignored = "a pending authorization captured in part: its transaction settles it"
		return nil
	case a.Amount < was:
		n.Type, n.Reason = issuer.NotifyReversal, ReasonPartialReversal
		n.Transaction = &issuer.NetworkTransaction{
			ID: ReversalID(a.ID, a.Amount), AuthorizationID: a.ID, Amount: was - a.Amount, Currency: currency,
		}
		return e.notify(n)
	}
	m := merchant(a.MerchantData)
	n.Type, n.Decision, n.Reason = issuer.NotifyAdvice, issuer.Approved, issuer.ApprovedWithoutUs
	n.Transaction = &issuer.NetworkTransaction{
		ID: IncrementID(a.ID, a.Amount), AuthorizationID: a.ID, Kind: issuer.KindAuthorization,
		Amount: a.Amount - was, Currency: currency, Merchant: &m,
	}
	return e.notify(n)
}

// previousAmount reads the amount an update's previous_attributes give;
// changed is false when the amount did not change.
func previousAmount(prev map[string]any) (amount int64, changed bool) {
	v, ok := prev["amount"].(float64)
	if !ok {
		return 0, false
	}
	return int64(v), true
}
