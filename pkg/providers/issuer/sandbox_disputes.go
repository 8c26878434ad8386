package issuer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"payments/pkg/ids"
	"payments/pkg/timestamp"
)

var _ Disputes = (*Sandbox)(nil)

// Sandbox magic values of disputes: the cents of the disputed amount.
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

// SandboxDispute is a dispute as the sandbox issuer keeps it: as opened
// (SUBMITTED, its provisional credit given at once), and the network's
// decision, Outcome (WON or LOST), which holds from DecidedAt.
type SandboxDispute struct {
	Dispute
	CardID              string
	Reason, Explanation string
	Outcome             string
	DecidedAt           time.Time
	CreatedAt           time.Time
}

// At returns d as the issuer has it at now: SUBMITTED with its provisional
// credit until it is decided; then WON, the credit kept, or LOST, the
// credit taken back.
func (d SandboxDispute) At(now time.Time) Dispute {
	out := d.Dispute
	if !now.Before(d.DecidedAt) {
		out.Status, out.Credited = d.Outcome, 0
		if d.Outcome == DisputeWon {
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
// once due (SandboxNetwork.Redeliver, the sweeper's card_network step):
// SUBMITTED with the credit at once, the decision DisputeDecisionAfter
// later. A transaction disputed under another reference is ErrDeclined; the
// sandbox keeps no record of the network's transactions, so it takes r's
// transaction and amount as given.
func (s *Sandbox) OpenDispute(ctx context.Context, r DisputeRequest) (Dispute, error) {
	switch {
	case r.Reference == "":
		return Dispute{}, invalid("dispute reference is required")
	case r.TransactionID == "":
		return Dispute{}, invalid("disputed transaction is required")
	case !slices.Contains(DisputeReasons, r.Reason):
		return Dispute{}, invalid("dispute reason %q is unknown", r.Reason)
	case r.Amount <= 0:
		return Dispute{}, invalid("disputed amount %d is not positive", r.Amount)
	case r.Amount%100 == disputeRefusedCents:
		return Dispute{}, invalid("the network refuses disputes of amounts ending in .%d", disputeRefusedCents)
	}
	c, err := s.store.Card(ctx, r.CardID)
	if err != nil {
		return Dispute{}, sandboxErr(err)
	}
	now := timestamp.Of(s.Now())
	d := SandboxDispute{
		Dispute: Dispute{ID: disputeIDPrefix + ids.NewV7(now), Reference: r.Reference, TransactionID: r.TransactionID,
			Status: DisputeSubmitted, Amount: r.Amount, Credited: r.Amount},
		CardID: c.ID, Reason: r.Reason, Explanation: r.Explanation, Outcome: DisputeWon,
		DecidedAt: now.Add(DisputeDecisionAfter), CreatedAt: now,
	}
	if r.Amount%100 == disputeLostCents {
		d.Outcome = DisputeLost
	}
	var notices []SandboxNotice
	for _, at := range []time.Time{now, d.DecidedAt} {
		n, err := disputeNotice(c.Card, d, at)
		if err != nil {
			return Dispute{}, err
		}
		notices = append(notices, n)
	}
	kept, err := s.store.PutDispute(ctx, d, notices)
	if err != nil {
		return Dispute{}, sandboxErr(err)
	}
	return kept.At(timestamp.Of(s.Now())), nil
}

// disputeNotice returns the network's report of d on card c as the issuer
// has it at at, kept to be delivered then.
func disputeNotice(c Card, d SandboxDispute, at time.Time) (SandboxNotice, error) {
	state := d.At(at)
	n := Notification{ID: NewEventID(at), Type: NotifyDispute, CardID: c.ID, Reference: c.Reference, Dispute: &state, CreatedAt: at}
	if err := n.Check(); err != nil {
		return SandboxNotice{}, fmt.Errorf("%w: %v", ErrBadNotification, err)
	}
	body, err := json.Marshal(n)
	if err != nil {
		return SandboxNotice{}, fmt.Errorf("issuer: encode the report of dispute %s: %w", d.ID, err)
	}
	return SandboxNotice{ID: n.ID, Body: body, Due: at}, nil
}
