package stripeissuing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	stripe "github.com/stripe/stripe-go/v85"

	"payments/pkg/providers/issuer"
)

var _ issuer.Disputes = (*Client)(nil)

// disputeReasons maps our dispute reasons onto Stripe's evidence reasons.
// Stripe tells merchandise from a service not as described; we do not:
// merchandise_not_as_described.
var disputeReasons = map[string]stripe.IssuingDisputeEvidenceReason{
	issuer.DisputeFraudulent:     stripe.IssuingDisputeEvidenceReasonFraudulent,
	issuer.DisputeNotReceived:    stripe.IssuingDisputeEvidenceReasonNotReceived,
	issuer.DisputeNotAsDescribed: stripe.IssuingDisputeEvidenceReasonMerchandiseNotAsDescribed,
	issuer.DisputeDuplicate:      stripe.IssuingDisputeEvidenceReasonDuplicate,
	issuer.DisputeCanceled:       stripe.IssuingDisputeEvidenceReasonCanceled,
	issuer.DisputeOther:          stripe.IssuingDisputeEvidenceReasonOther,
}

// evidence is Stripe's evidence of reason, its explanation ours.
func evidence(reason stripe.IssuingDisputeEvidenceReason, explanation string) *stripe.IssuingDisputeCreateEvidenceParams {
	x := stripe.String(explanation)
	e := &stripe.IssuingDisputeCreateEvidenceParams{Reason: stripe.String(string(reason))}
	switch reason {
	case stripe.IssuingDisputeEvidenceReasonFraudulent:
		e.Fraudulent = &stripe.IssuingDisputeCreateEvidenceFraudulentParams{Explanation: x}
	case stripe.IssuingDisputeEvidenceReasonNotReceived:
		e.NotReceived = &stripe.IssuingDisputeCreateEvidenceNotReceivedParams{Explanation: x}
	case stripe.IssuingDisputeEvidenceReasonMerchandiseNotAsDescribed:
		e.MerchandiseNotAsDescribed = &stripe.IssuingDisputeCreateEvidenceMerchandiseNotAsDescribedParams{Explanation: x}
	case stripe.IssuingDisputeEvidenceReasonDuplicate:
		e.Duplicate = &stripe.IssuingDisputeCreateEvidenceDuplicateParams{Explanation: x}
	case stripe.IssuingDisputeEvidenceReasonCanceled:
		e.Canceled = &stripe.IssuingDisputeCreateEvidenceCanceledParams{Explanation: x}
	default:
		e.Other = &stripe.IssuingDisputeCreateEvidenceOtherParams{Explanation: x}
	}
	return e
}

// OpenDispute creates the dispute at Stripe (POST /v1/issuing/disputes:
// the transaction, the amount, our reason as Stripe's evidence reason with
// our explanation, metadata.reference our dispute id; Idempotency-Key
// dispute-<our id>), then submits it (POST /v1/issuing/disputes/{id}/submit,
// Idempotency-Key dispute-submit-<our id>). A create Stripe refuses after
// its 24 hours of idempotency (the transaction is disputed already) is
// answered with the dispute of our reference on that transaction, when
// there is one. A transaction Stripe does not know is ErrNotFound; a
// dispute it refuses to create or submit, ErrDeclined.
func (c *Client) OpenDispute(ctx context.Context, r issuer.DisputeRequest) (issuer.Dispute, error) {
	reason, ok := disputeReasons[r.Reason]
	if !ok {
		return issuer.Dispute{}, fmt.Errorf("%w: dispute reason %q is none of %v", issuer.ErrDeclined, r.Reason, issuer.DisputeReasons)
	}
	p := &stripe.IssuingDisputeCreateParams{
		Transaction: stripe.String(r.TransactionID), Evidence: evidence(reason, r.Explanation),
		Metadata: map[string]string{Reference: r.Reference},
	}
	if r.Amount > 0 {
		p.Amount = stripe.Int64(r.Amount)
	}
	p.AddExpand("balance_transactions")
	p.SetIdempotencyKey("dispute-" + r.Reference)
	d, err := c.sc.V1IssuingDisputes.Create(ctx, p)
	if err != nil {
		var se *stripe.Error
		if errors.As(err, &se) && se.HTTPStatusCode == http.StatusBadRequest && se.Code == stripe.ErrorCodeResourceMissing {
			return issuer.Dispute{}, fmt.Errorf("%w: create a dispute: Stripe answered %d %s: %s", issuer.ErrNotFound, se.HTTPStatusCode, se.Type, se.Msg)
		}
		err = fail("create a dispute", err, issuer.ErrDeclined)
		if !errors.Is(err, issuer.ErrDeclined) {
			return issuer.Dispute{}, err
		}
		found, ferr := c.disputeOf(ctx, r.TransactionID, r.Reference)
		if ferr != nil || found == nil {
			return issuer.Dispute{}, errors.Join(err, ferr)
		}
		d = found
	}
	if d.Status == stripe.IssuingDisputeStatusUnsubmitted {
		sp := &stripe.IssuingDisputeSubmitParams{}
		sp.AddExpand("balance_transactions")
		sp.SetIdempotencyKey("dispute-submit-" + r.Reference)
		if d, err = c.sc.V1IssuingDisputes.Submit(ctx, d.ID, sp); err != nil {
			return issuer.Dispute{}, fail("submit a dispute", err, issuer.ErrDeclined)
		}
	}
	out, err := disputeFrom(d)
	if err != nil {
		return issuer.Dispute{}, fmt.Errorf("%w: Stripe's dispute %s: %v", issuer.ErrUnavailable, d.ID, err)
	}
	return out, nil
}

// disputeOf returns the dispute of transaction whose metadata names our
// reference, nil for none.
func (c *Client) disputeOf(ctx context.Context, transaction, reference string) (*stripe.IssuingDispute, error) {
	p := &stripe.IssuingDisputeListParams{Transaction: stripe.String(transaction)}
	p.AddExpand("data.balance_transactions")
	for d, err := range c.sc.V1IssuingDisputes.List(ctx, p).All(ctx) {
		if err != nil {
			return nil, fail("list a transaction's disputes", err, nil)
		}
		if d.Metadata[Reference] == reference {
			return d, nil
		}
	}
	return nil, nil
}

// CompleteDispute fills n, a dispute's notification read from one of
// Stripe's events, with the dispute as Stripe has it now (GET
// /v1/issuing/disputes/{id}, expanding its balance transactions, which an
// event leaves out, and its transaction's card): its status, what Stripe
// credited for it, and its card, ours named by the card's metadata.
// ErrNotFound for a dispute, or a card, that is none of ours.
func (c *Client) CompleteDispute(ctx context.Context, n *issuer.Notification) error {
	if n.Dispute == nil || n.Dispute.ID == "" {
		return fmt.Errorf("%w: notification %s names no dispute", issuer.ErrNotFound, n.ID)
	}
	p := &stripe.IssuingDisputeRetrieveParams{}
	p.AddExpand("balance_transactions")
	p.AddExpand("transaction.card")
	d, err := c.sc.V1IssuingDisputes.Retrieve(ctx, n.Dispute.ID, p)
	if err != nil {
		return fail("read a dispute", err, nil)
	}
	out, err := disputeFrom(d)
	if err != nil {
		return fmt.Errorf("%w: Stripe's dispute %s: %v", issuer.ErrUnavailable, d.ID, err)
	}
	if d.Transaction == nil || d.Transaction.Card == nil || d.Transaction.Card.ID == "" {
		return fmt.Errorf("%w: Stripe gave dispute %s without its transaction's card", issuer.ErrUnavailable, d.ID)
	}
	card := d.Transaction.Card
	if card.Metadata != nil {
		c.remember(card.ID, card.Metadata[Reference])
	}
	ref, err := c.CardReference(ctx, card.ID)
	if err != nil {
		return err
	}
	n.Dispute, n.CardID, n.Reference = &out, card.ID, ref
	return nil
}

// dispute maps an issuing_dispute event onto a dispute's notification of
// the dispute as the event has it; CompleteDispute reads the rest.
func (e *Event) dispute(ev stripe.Event) error {
	var d stripe.IssuingDispute
	if err := json.Unmarshal(ev.Data.Raw, &d); err != nil {
		return err
	}
	out, err := disputeFrom(&d)
	if err != nil {
		return err
	}
	n := issuer.Notification{ID: e.ID, Type: issuer.NotifyDispute, Dispute: &out, CreatedAt: created(ev)}
	if t := d.Transaction; t != nil && t.Card != nil {
		n.CardID, n.Reference = t.Card.ID, t.Card.Metadata[Reference]
	}
	e.Notification = &n
	return nil // checked by Body once its card is known
}

// disputeFrom is Stripe's dispute as the issuer's: its status (unsubmitted
// and submitted are SUBMITTED, expired is LOST), and what Stripe credited
// for it, the sum of its balance transactions (a credit positive, what
// Stripe took back negative), never below 0: 0 when they are not
// included.
func disputeFrom(d *stripe.IssuingDispute) (issuer.Dispute, error) {
	out := issuer.Dispute{ID: d.ID, Reference: d.Metadata[Reference], Amount: d.Amount}
	if d.Transaction != nil {
		out.TransactionID = d.Transaction.ID
	}
	switch d.Status {
	case stripe.IssuingDisputeStatusUnsubmitted, stripe.IssuingDisputeStatusSubmitted:
		out.Status = issuer.DisputeSubmitted
	case stripe.IssuingDisputeStatusWon:
		out.Status = issuer.DisputeWon
	case stripe.IssuingDisputeStatusLost, stripe.IssuingDisputeStatusExpired:
		out.Status = issuer.DisputeLost
	default:
		return issuer.Dispute{}, fmt.Errorf("dispute %s: unknown status %q", d.ID, d.Status)
	}
	for _, b := range d.BalanceTransactions {
		if b != nil {
			out.Credited += b.Amount
		}
	}
	out.Credited = max(out.Credited, 0)
	switch {
	case out.ID == "":
		return issuer.Dispute{}, errors.New("a dispute without its id")
	case out.TransactionID == "":
		return issuer.Dispute{}, fmt.Errorf("dispute %s: no transaction", d.ID)
	case out.Amount <= 0:
		return issuer.Dispute{}, fmt.Errorf("dispute %s: amount %d", d.ID, d.Amount)
	}
	return out, nil
}
