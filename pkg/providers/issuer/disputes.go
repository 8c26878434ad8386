package issuer

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// DisputeRequest opens a dispute at the issuer on one of its settled
// transactions.
type DisputeRequest struct {
	// Reference is our dispute id; opening is idempotent on it.
	Reference string
	// CardID is the issuer's card, TransactionID its settled transaction
	// (Stripe's ipi_…) disputed.
	CardID, TransactionID string
	// Reason is one of DisputeReasons; Explanation is the company's
	// account of it.
	Reason, Explanation string
	// Amount is what is disputed, USD cents: at most what the transaction
	// settled and was not refunded.
	Amount int64
}

// Dispute reasons, as a company gives them; an adapter maps them onto its
// issuer's (Stripe's fraudulent, not_received, …).
const (
	DisputeFraudulent     = "FRAUDULENT"
	DisputeNotReceived    = "NOT_RECEIVED"
	DisputeNotAsDescribed = "NOT_AS_DESCRIBED"
	DisputeDuplicate      = "DUPLICATE"
	DisputeCanceled       = "CANCELED"
	DisputeOther          = "OTHER"
)

// DisputeReasons are the reasons a dispute may give.
var DisputeReasons = []string{DisputeFraudulent, DisputeNotReceived, DisputeNotAsDescribed, DisputeDuplicate, DisputeCanceled, DisputeOther}

// Dispute statuses an issuer reports.
const (
	// DisputeSubmitted is a dispute the issuer is deciding.
	DisputeSubmitted = "SUBMITTED"
	// DisputeWon and DisputeLost are its outcome.
	DisputeWon  = "WON"
	DisputeLost = "LOST"
)

// Dispute is the issuer's record of a dispute.
type Dispute struct {
	// ID is the issuer's id (Stripe's idp_…); Reference is ours.
	ID        string `json:"id"`
	Reference string `json:"reference,omitempty"`
	// TransactionID is the issuer's transaction disputed.
	TransactionID string `json:"transaction_id"`
	Status        string `json:"status"`
	Amount        int64  `json:"amount"`
	// Credited is what the issuer has credited for the dispute so far, net
	// of what it took back (a provisional credit, the funds of a won
	// dispute, a rescinded credit), USD cents: the card follows it.
	Credited int64 `json:"credited"`
}

// check checks a dispute as a notification carries it.
func (d *Dispute) check() error {
	switch {
	case d.ID == "":
		return errors.New("no dispute id")
	case d.TransactionID == "":
		return errors.New("no disputed transaction id")
	case !slices.Contains([]string{DisputeSubmitted, DisputeWon, DisputeLost}, d.Status):
		return fmt.Errorf("unknown dispute status %q", d.Status)
	case d.Amount <= 0:
		return errors.New("dispute amount not above 0")
	case d.Credited < 0:
		return errors.New("negative credit")
	}
	return nil
}

// Disputes is an issuer that takes disputes.
type Disputes interface {
	// OpenDispute opens a dispute, or returns the one opened with
	// r.Reference; ErrNotFound when the issuer has no such transaction,
	// ErrDeclined when it refuses the dispute (the transaction is not
	// settled, or disputed already).
	OpenDispute(ctx context.Context, r DisputeRequest) (Dispute, error)
}
