package stripesim

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/stripe/stripe-go/v85"
)

// Explanations that decide a test-mode dispute at its submission, as
// Stripe's test mode does (its Dashboard writes them when asked for an
// outcome): any other stays submitted until SettleDispute.
const (
	WinningEvidence = "winning_evidence"
	LosingEvidence  = "losing_evidence"
)

// dispute is an Issuing dispute and the balance transactions of what it
// credited and took back.
type dispute struct {
	d       *stripe.IssuingDispute
	credits []*stripe.BalanceTransaction
}

// explanation is the explanation of d's evidence of its reason.
func (d *dispute) explanation() string {
	e := d.d.Evidence
	switch e.Reason {
	case stripe.IssuingDisputeEvidenceReasonCanceled:
		return e.Canceled.Explanation
	case stripe.IssuingDisputeEvidenceReasonDuplicate:
		return e.Duplicate.Explanation
	case stripe.IssuingDisputeEvidenceReasonFraudulent:
		return e.Fraudulent.Explanation
	case stripe.IssuingDisputeEvidenceReasonMerchandiseNotAsDescribed:
		return e.MerchandiseNotAsDescribed.Explanation
	case stripe.IssuingDisputeEvidenceReasonNoValidAuthorization:
		return e.NoValidAuthorization.Explanation
	case stripe.IssuingDisputeEvidenceReasonNotReceived:
		return e.NotReceived.Explanation
	case stripe.IssuingDisputeEvidenceReasonServiceNotAsDescribed:
		return e.ServiceNotAsDescribed.Explanation
	}
	return e.Other.Explanation
}

// credited is what d's balance transactions credited, net.
func (d *dispute) credited() int64 {
	var sum int64
	for _, b := range d.credits {
		sum += b.Amount
	}
	return sum
}

// evidenceOf reads the form's evidence: its reason and that reason's
// explanation, the one piece of evidence the simulation keeps.
func evidenceOf(r *request) (*stripe.IssuingDisputeEvidence, result) {
	reason := stripe.IssuingDisputeEvidenceReason(or(r.form.Get("evidence[reason]"), "other"))
	x := r.form.Get("evidence[" + string(reason) + "][explanation]")
	e := &stripe.IssuingDisputeEvidence{Reason: reason}
	switch reason {
	case stripe.IssuingDisputeEvidenceReasonCanceled:
		e.Canceled = &stripe.IssuingDisputeEvidenceCanceled{Explanation: x}
	case stripe.IssuingDisputeEvidenceReasonDuplicate:
		e.Duplicate = &stripe.IssuingDisputeEvidenceDuplicate{Explanation: x}
	case stripe.IssuingDisputeEvidenceReasonFraudulent:
		e.Fraudulent = &stripe.IssuingDisputeEvidenceFraudulent{Explanation: x}
	case stripe.IssuingDisputeEvidenceReasonMerchandiseNotAsDescribed:
		e.MerchandiseNotAsDescribed = &stripe.IssuingDisputeEvidenceMerchandiseNotAsDescribed{Explanation: x}
	case stripe.IssuingDisputeEvidenceReasonNoValidAuthorization:
		e.NoValidAuthorization = &stripe.IssuingDisputeEvidenceNoValidAuthorization{Explanation: x}
	case stripe.IssuingDisputeEvidenceReasonNotReceived:
		e.NotReceived = &stripe.IssuingDisputeEvidenceNotReceived{Explanation: x}
	case stripe.IssuingDisputeEvidenceReasonServiceNotAsDescribed:
		e.ServiceNotAsDescribed = &stripe.IssuingDisputeEvidenceServiceNotAsDescribed{Explanation: x}
	case stripe.IssuingDisputeEvidenceReasonOther:
		e.Other = &stripe.IssuingDisputeEvidenceOther{Explanation: x}
	default:
		return nil, invalid("parameter_invalid", fmt.Sprintf("Invalid evidence[reason]: %s", reason))
	}
	return e, result{}
}

// createDispute answers POST /v1/issuing/disputes: an unsubmitted dispute
// of a capture (amount: all of it by default, at most all of it), which
// must not be refunded in any part nor disputed already, as Stripe's
// eligibility rules say. It emits issuing_dispute.created.
func (s *Sim) createDispute(r *request) result {
	amount, has, bad := formInt(r, "amount")
	if bad.status != 0 {
		return bad
	}
	ev, bad := evidenceOf(r)
	if ev == nil {
		return bad
	}
	id := r.form.Get("transaction")
	s.mu.Lock()
	defer s.mu.Unlock()
	t, found := s.txns[id]
	switch {
	case id == "":
		return invalid("parameter_missing", "Missing required param: transaction.")
	case !found:
		return invalid("resource_missing", fmt.Sprintf("No such issuing.transaction: '%s'", id))
	case t.Type != stripe.IssuingTransactionTypeCapture:
		return invalid("", "Only a capture can be disputed.")
	case s.refunded(t) > 0:
		return invalid("", "A transaction refunded in any part cannot be disputed.")
	case t.Dispute != nil:
		return invalid("", fmt.Sprintf("Transaction %s is already disputed (%s).", t.ID, t.Dispute.ID))
	}
	if !has {
		amount = -t.Amount
	}
	if amount <= 0 || amount > -t.Amount {
		return invalid("parameter_invalid_integer", fmt.Sprintf("amount must be between 1 and the transaction's amount, %d.", -t.Amount))
	}
	d := &dispute{d: &stripe.IssuingDispute{
		ID: newID("idp_"), Object: "issuing.dispute", Amount: amount, Created: s.cfg.Now().Unix(),
		Currency: stripe.CurrencyUSD, Evidence: ev, Metadata: map[string]string{},
		Status: stripe.IssuingDisputeStatusUnsubmitted, Transaction: &stripe.IssuingTransaction{ID: t.ID},
	}}
	if bad := applyMetadata(r, d.d.Metadata); bad.status != 0 {
		return bad
	}
	t.Dispute = &stripe.IssuingDispute{ID: d.d.ID}
	s.disputes[d.d.ID] = d
	s.disputeList = append(s.disputeList, d)
	s.emit(r, "issuing_dispute.created", s.disputeJSON(d, nil, ""), nil)
	return ok(s.disputeJSON(d, r, ""))
}

// submitDispute answers POST /v1/issuing/disputes/{id}/submit: an
// unsubmitted dispute whose evidence has an explanation (the simulation's
// one requirement) is submitted (issuing_dispute.submitted), and answered
// so; its explanation WinningEvidence or LosingEvidence then decides it at
// once (SettleDispute).
func (s *Sim) submitDispute(r *request) result {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, found := s.disputes[r.PathValue("id")]
	switch {
	case !found:
		return missing("issuing.dispute", r.PathValue("id"))
	case d.d.Status != stripe.IssuingDisputeStatusUnsubmitted:
		return invalid("", fmt.Sprintf("This dispute is %s; only an unsubmitted dispute can be submitted.", d.d.Status))
	case d.explanation() == "":
		return invalid("", fmt.Sprintf("The evidence of reason %s lacks its explanation.", d.d.Evidence.Reason))
	}
	if bad := applyMetadata(r, d.d.Metadata); bad.status != 0 {
		return bad
	}
	d.d.Status = stripe.IssuingDisputeStatusSubmitted
	s.emit(r, "issuing_dispute.submitted", s.disputeJSON(d, nil, ""), nil)
	answer := ok(s.disputeJSON(d, r, ""))
	switch d.explanation() {
	case WinningEvidence:
		s.settle(r, d, stripe.IssuingDisputeStatusWon)
	case LosingEvidence:
		s.settle(r, d, stripe.IssuingDisputeStatusLost)
	}
	return answer
}

// SettleDispute decides dispute id as the card network would, status won,
// lost or expired (a dispute never submitted): won credits what was not
// credited yet of its amount (issuing_dispute.closed, then
// issuing_dispute.funds_reinstated); lost takes back what was credited
// (issuing_dispute.closed, then issuing_dispute.funds_rescinded when there
// was any).
func (s *Sim) SettleDispute(id string, status stripe.IssuingDisputeStatus) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, found := s.disputes[id]
	switch {
	case !found:
		return fmt.Errorf("stripesim: no dispute %s", id)
	case !slices.Contains([]stripe.IssuingDisputeStatus{stripe.IssuingDisputeStatusWon, stripe.IssuingDisputeStatusLost, stripe.IssuingDisputeStatusExpired}, status):
		return fmt.Errorf("stripesim: a dispute is settled won, lost or expired, not %s", status)
	case status == stripe.IssuingDisputeStatusExpired && d.d.Status != stripe.IssuingDisputeStatusUnsubmitted,
		status != stripe.IssuingDisputeStatusExpired && d.d.Status != stripe.IssuingDisputeStatusSubmitted:
		return fmt.Errorf("stripesim: dispute %s is %s, it cannot become %s", id, d.d.Status, status)
	}
	s.settle(nil, d, status)
	return nil
}

// settle gives d its outcome status. s.mu is held.
func (s *Sim) settle(r *request, d *dispute, status stripe.IssuingDisputeStatus) {
	d.d.Status = status
	var credit int64
	switch status {
	case stripe.IssuingDisputeStatusWon:
		credit = d.d.Amount - d.credited()
	default:
		credit = -d.credited()
		if status == stripe.IssuingDisputeStatusLost {
			d.d.LossReason = stripe.IssuingDisputeLossReasonOther
		}
	}
	s.emit(r, "issuing_dispute.closed", s.disputeJSON(d, nil, ""), nil)
	if credit != 0 {
		s.credit(r, d, credit)
	}
}

// CreditDispute credits dispute id amount (a provisional credit, as a
// card program may give one), or takes -amount back, in a balance
// transaction of the Issuing balance: issuing_dispute.funds_reinstated or
// issuing_dispute.funds_rescinded.
func (s *Sim) CreditDispute(id string, amount int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, found := s.disputes[id]
	switch {
	case !found:
		return fmt.Errorf("stripesim: no dispute %s", id)
	case amount == 0 || d.credited()+amount < 0 || d.credited()+amount > d.d.Amount:
		return fmt.Errorf("stripesim: dispute %s of %d credited %d cannot be credited %d more", id, d.d.Amount, d.credited(), amount)
	}
	s.credit(nil, d, amount)
	return nil
}

// credit moves amount onto the Issuing balance for d and emits the event
// that says so. s.mu is held.
func (s *Sim) credit(r *request, d *dispute, amount int64) {
	now := s.cfg.Now().Unix()
	d.credits = append(d.credits, &stripe.BalanceTransaction{
		ID: newID("txn_"), Object: "balance_transaction", Amount: amount, Net: amount, Currency: stripe.CurrencyUSD,
		Created: now, AvailableOn: now, Type: stripe.BalanceTransactionTypeIssuingDispute,
		ReportingCategory: "issuing_dispute", Status: stripe.BalanceTransactionStatusAvailable,
		FeeDetails: []*stripe.BalanceTransactionFeeDetail{},
	})
	s.balance += amount
	typ := "issuing_dispute.funds_reinstated"
	if amount < 0 {
		typ = "issuing_dispute.funds_rescinded"
	}
	s.emit(r, typ, s.disputeJSON(d, nil, ""), nil)
}

// getDispute answers GET /v1/issuing/disputes/{id}.
func (s *Sim) getDispute(r *request) result {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, found := s.disputes[r.PathValue("id")]
	if !found {
		return missing("issuing.dispute", r.PathValue("id"))
	}
	return ok(s.disputeJSON(d, r, ""))
}

// disputeJSON is the dispute as Stripe answers r (nil: as an event carries
// it): its transaction as an id unless expanded (transaction, or
// transaction.card for its card too), its balance transactions, which
// Stripe includes only when asked (expand[]=balance_transactions), null.
// A list's expansions start with prefix "data.", an object's with "".
// s.mu is held.
func (s *Sim) disputeJSON(d *dispute, r *request, prefix string) []byte {
	asked := func(f string) bool { return r != nil && expanded(r, prefix+f) }
	extra := map[string]json.RawMessage{"balance_transactions": json.RawMessage("null")}
	if asked("balance_transactions") {
		b, _ := json.Marshal(d.credits)
		if d.credits == nil {
			b = []byte("[]")
		}
		extra["balance_transactions"] = b
	}
	t := s.txns[d.d.Transaction.ID]
	switch {
	case asked("transaction.card"):
		extra["transaction"] = transactionJSON(t, s.cards[t.Card.ID])
	case asked("transaction"):
		extra["transaction"] = transactionJSON(t, nil)
	default:
		extra["transaction"], _ = json.Marshal(t.ID)
	}
	return encode(d.d, nil, extra)
}
