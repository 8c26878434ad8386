package issuersandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"payments/pkg/ids"
	"payments/pkg/providers/issuer"
	"payments/pkg/timestamp"
)

var _ issuer.Disputes = (*Issuer)(nil)

// The sandbox issuer's magic values of disputes: the cents of the disputed amount.
const (
	// disputeLostCents: the network decides the dispute LOST (the
	// provisional credit taken back); any other amount is WON.
	disputeLostCents = 13
	// disputeRefusedCents: the issuer refuses to open the dispute
	// (ErrDeclined).
	disputeRefusedCents = 14
)

// DisputeDecisionAfter is how long after a dispute is opened the sandbox
// network decides it.
const DisputeDecisionAfter = 5 * time.Minute

// disputeIDPrefix starts the sandbox issuer's dispute ids.
const disputeIDPrefix = "dp_"

// Dispute is a dispute as the sandbox issuer keeps it: as opened
// (SUBMITTED, its provisional credit given at once), and the network's
// decision, Outcome (WON or LOST), which holds from DecidedAt.
type Dispute struct {
	issuer.Dispute
	CardID              string
	Reason, Explanation string
	Outcome             string
	DecidedAt           time.Time
	CreatedAt           time.Time
}

// At returns d as the issuer has it at now: SUBMITTED with its provisional
// credit until it is decided; then WON, the credit kept, or LOST, the
// credit taken back.
func (d Dispute) At(now time.Time) issuer.Dispute {
	out := d.Dispute
	if !now.Before(d.DecidedAt) {
		out.Status, out.Credited = d.Outcome, 0
		if d.Outcome == issuer.DisputeWon {
			out.Credited = d.Amount
		}
	}
	return out
}

// OpenDispute opens a dispute once per r.Reference (a repeat returns it as
// it is now) on one of the sandbox's cards, decided by the cents of
// r.Amount: .14 is refused (ErrDeclined, nothing kept), .13 is LOST, any
// other is WON. It credits the amount at once (a provisional credit), and
// the network reports the dispute as the issuer moves it, each report kept
// until acknowledged (store and forward) and delivered by its next round
// once due (Network.Redeliver, the sweeper's card_network step):
// SUBMITTED with the credit at once, the decision DisputeDecisionAfter
// later. A transaction disputed under another reference is ErrDeclined; the
// sandbox keeps no record of the network's transactions, so it takes r's
// transaction and amount as given.
func (s *Issuer) OpenDispute(ctx context.Context, r issuer.DisputeRequest) (issuer.Dispute, error) {
	switch {
	case r.Reference == "":
		return issuer.Dispute{}, invalid("dispute reference is required")
	case r.TransactionID == "":
		return issuer.Dispute{}, invalid("disputed transaction is required")
	case !slices.Contains(issuer.DisputeReasons, r.Reason):
		return issuer.Dispute{}, invalid("dispute reason %q is unknown", r.Reason)
	case r.Amount <= 0:
		return issuer.Dispute{}, invalid("disputed amount %d is not positive", r.Amount)
	case r.Amount%100 == disputeRefusedCents:
		return issuer.Dispute{}, invalid("the network refuses disputes of amounts ending in .%d", disputeRefusedCents)
	}
	c, err := s.store.Card(ctx, r.CardID)
	if err != nil {
		return issuer.Dispute{}, sandboxErr(err)
	}
	now := timestamp.Of(s.Now())
	d := Dispute{
		Dispute: issuer.Dispute{ID: disputeIDPrefix + ids.NewV7(now), Reference: r.Reference, TransactionID: r.TransactionID,
			Status: issuer.DisputeSubmitted, Amount: r.Amount, Credited: r.Amount},
		CardID: c.ID, Reason: r.Reason, Explanation: r.Explanation, Outcome: issuer.DisputeWon,
		DecidedAt: now.Add(DisputeDecisionAfter), CreatedAt: now,
	}
	if r.Amount%100 == disputeLostCents {
		d.Outcome = issuer.DisputeLost
	}
	var notices []Notice
	for _, at := range []time.Time{now, d.DecidedAt} {
		n, err := disputeNotice(c.Card, d, at)
		if err != nil {
			return issuer.Dispute{}, err
		}
		notices = append(notices, n)
	}
	kept, err := s.store.PutDispute(ctx, d, notices)
	if err != nil {
		return issuer.Dispute{}, sandboxErr(err)
	}
	return kept.At(timestamp.Of(s.Now())), nil
}

// disputeNotice returns the network's report of d on card c as the issuer
// has it at at, kept to be delivered then.
func disputeNotice(c issuer.Card, d Dispute, at time.Time) (Notice, error) {
	state := d.At(at)
	n := issuer.Notification{ID: issuer.NewEventID(at), Type: issuer.NotifyDispute, CardID: c.ID, Reference: c.Reference, Dispute: &state, CreatedAt: at}
	if err := n.Check(); err != nil {
		return Notice{}, fmt.Errorf("%w: %v", issuer.ErrBadNotification, err)
	}
	body, err := json.Marshal(n)
	if err != nil {
		return Notice{}, fmt.Errorf("issuer: encode the report of dispute %s: %w", d.ID, err)
	}
	return Notice{ID: n.ID, Body: body, Due: at}, nil
}
