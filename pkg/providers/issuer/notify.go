package issuer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"payments/pkg/ids"
)

// Notification is what an issuer reports about one of its cards by calling
// us (POST /issuer/webhooks, signed with the issuer's secret): it reaches
// the issuer-events queue and the card-worker applies it, once per ID
// whatever the queue repeats. Amounts are USD cents.
type Notification struct {
	// ID is the issuer's id of the event; an event is applied once.
	ID   string `json:"id"`
	Type string `json:"type"`
	// CardID is the issuer's card id, Reference our card id.
	CardID    string `json:"card_id"`
	Reference string `json:"reference"`
	// Transaction is the card network's transaction an authorization,
	// settlement, reversal or refund is about.
	Transaction *NetworkTransaction `json:"transaction,omitempty"`
	// Decision is the network's final word on an advice's authorization:
	// APPROVED or DECLINED.
	Decision string `json:"decision,omitempty"`
	// Reason says why: a termination's; an advice's decline reason
	// (StandInReason when the network declined on its own), or, on an
	// approval, ApprovedWithoutUs when the issuer or the network approved
	// without our answer.
	Reason string `json:"reason,omitempty"`
	// Dispute is a dispute's notification's dispute, as the issuer has it
	// now.
	Dispute   *Dispute  `json:"dispute,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// NetworkTransaction is a transaction of the card network.
type NetworkTransaction struct {
	// ID is the network's id of this transaction (Stripe's ipi_…, iauth_…):
	// what it moved is applied once per ID, whatever reports it (an event,
	// its redelivery, the reconciliation). AuthorizationID, for a
	// settlement, a reversal or a refund, is the authorization it follows:
	// "" for a settlement the network forced with none (a force capture)
	// and for a refund linked to none. On an approval's advice it names the
	// authorization an increment adds to (more held on an authorization
	// already approved, ApprovedWithoutUs: Amount is the increment), ""
	// for an authorization of its own.
	ID              string `json:"id"`
	AuthorizationID string `json:"authorization_id,omitempty"`
	// Kind of an authorization: AUTHORIZATION, PREAUTHORIZATION or
	// VERIFICATION.
	Kind string `json:"kind,omitempty"`
	// Amount is what the transaction moved, whatever the hold: a
	// settlement takes it from the card, a refund gives it; a reversal
	// releases that much of the hold (0: all that is left of it).
	Amount   int64     `json:"amount"`
	Currency string    `json:"currency"`
	Merchant *Merchant `json:"merchant,omitempty"`
	// Close, on a settlement, closes its authorization: what is left of
	// the hold is released (a capture that is the last); otherwise the
	// rest stays held for a later capture until the authorization closes
	// (a reversal of what is left).
	Close bool `json:"close,omitempty"`
}

// Merchant is where a card was used; Country is ISO 3166-1 alpha-2.
type Merchant struct {
	Name    string `json:"name"`
	City    string `json:"city"`
	Country string `json:"country"`
}

// Notification types.
const (
	// NotifyAdvice is the network's advice of an authorization it decided,
	// after it asked us (AuthorizationRequest): our answer, or, when that
	// was late or missing, its own decline (StandInReason). It tells the
	// issuer what our decision moved on the card; a stand-in decline
	// releases the hold a late approval of ours placed, or, when we had
	// decided nothing yet, is recorded as the authorization's decline.
	NotifyAdvice = "authorization.advice"
	// NotifySettlement settles an authorization: the amount (at most the
	// hold) leaves the card and the hold is released.
	NotifySettlement = "settlement"
	// NotifyReversal releases an unsettled authorization's hold.
	NotifyReversal = "reversal"
	// NotifyRefund gives back (part of) what an authorization settled.
	NotifyRefund = "refund"
	// NotifyCardTerminated is a card the issuer terminated on its own (a
	// risk block): the card is ended here too, its balance refunded.
	NotifyCardTerminated = "card.terminated"
	// NotifyDispute is a dispute of one of the card's settled
	// transactions, as the issuer has it now (Notification.Dispute): the
	// card follows what the issuer credited for it.
	NotifyDispute = "dispute"
)

// ApprovedWithoutUs is the reason of an approval's advice that the issuer
// or the network made without our answer (a stand-in that approves, a
// timeout set to approve, an endpoint not configured): the hold is
// recorded all the same.
const ApprovedWithoutUs = "approved_without_us"

// ReleaseExpired is the reason of a reversal that releases what an
// expired authorization held (the network's expiry, or our own hold
// expiry): the authorization stays capturable, a later capture being a
// settlement of its own. The reversal's event carries it as its reason
// (events.ReversalReasonExpired, the same word).
const ReleaseExpired = "expired"

// Authorization kinds of NetworkTransaction.Kind.
const (
	KindAuthorization    = "AUTHORIZATION"
	KindPreauthorization = "PREAUTHORIZATION"
	KindVerification     = "VERIFICATION"
)

// ErrBadNotification is a notification that cannot be applied as read.
var ErrBadNotification = errors.New("issuer: malformed notification")

// ParseNotification reads a notification's JSON: an id, a known type, our
// card reference and, but for a termination, the network's transaction
// (for an advice, the authorization's id, a known kind, a merchant and
// the decision; the authorization it follows otherwise; an amount in USD:
// above 0, but for a verification, which has 0, and a reversal, which
// releases the whole hold) are required.
func ParseNotification(b []byte) (Notification, error) {
	var n Notification
	if err := json.Unmarshal(b, &n); err != nil {
		return Notification{}, fmt.Errorf("%w: %v", ErrBadNotification, err)
	}
	if err := n.Check(); err != nil {
		return Notification{}, fmt.Errorf("%w: %v", ErrBadNotification, err)
	}
	return n, nil
}

// Check checks n as ParseNotification does, for a notification built
// rather than read.
func (n Notification) Check() error {
	switch {
	case n.ID == "":
		return errors.New("no id")
	case n.Reference == "":
		return errors.New("no card reference")
	}
	switch n.Type {
	case NotifyCardTerminated:
		return nil
	case NotifyDispute:
		if n.Dispute == nil {
			return errors.New("no dispute")
		}
		return n.Dispute.check()
	case NotifyAdvice:
		if n.Decision != Approved && n.Decision != Declined {
			return fmt.Errorf("decision %q is neither %s nor %s", n.Decision, Approved, Declined)
		}
		if n.Transaction == nil {
			return errors.New("no transaction id")
		}
		return n.Transaction.checkAuthorization()
	case NotifySettlement, NotifyReversal, NotifyRefund:
	default:
		return fmt.Errorf("unknown type %q", n.Type)
	}
	t := n.Transaction
	switch {
	case t == nil || t.ID == "":
		return errors.New("no transaction id")
	case t.Currency != "USD":
		return fmt.Errorf("currency %q is not USD", t.Currency)
	case t.Amount < 0:
		return errors.New("negative amount")
	case t.Amount == 0 && n.Type != NotifyReversal:
		return errors.New("amount 0")
	case t.AuthorizationID == "" && n.Type == NotifyReversal:
		return errors.New("no authorization id")
	case t.Close && n.Type != NotifySettlement:
		return errors.New("only a settlement closes its authorization")
	}
	return nil
}

// checkAuthorization checks an authorization of the network: an id, a
// known kind, an amount in USD above 0 (0 for a verification) and a
// merchant.
func (t *NetworkTransaction) checkAuthorization() error {
	switch {
	case t.ID == "":
		return errors.New("no transaction id")
	case t.Currency != "USD":
		return fmt.Errorf("currency %q is not USD", t.Currency)
	case t.Kind != KindAuthorization && t.Kind != KindPreauthorization && t.Kind != KindVerification:
		return fmt.Errorf("unknown authorization kind %q", t.Kind)
	case t.Amount < 0:
		return errors.New("negative amount")
	case t.Kind == KindVerification && t.Amount != 0:
		return errors.New("a verification has amount 0")
	case t.Kind != KindVerification && t.Amount == 0:
		return errors.New("amount 0")
	case t.Merchant == nil || t.Merchant.Name == "":
		return errors.New("no merchant")
	}
	return nil
}

// Authorization is an authorization as the card network made it: its
// request, the decision it applied (ours, or its stand-in decline), and
// the advice it delivered.
type Authorization struct {
	Request AuthorizationRequest
	Answer  AuthorizationAnswer
	// StandIn is true when the network declined on its own.
	StandIn bool
	Advice  Notification
}

// NewTransactionID returns a new id of the network's transactions, as it
// makes them (ntx_<uuid>), made at now.
func NewTransactionID(now time.Time) string { return "ntx_" + ids.NewV7(now) }

// NewEventID returns a new id of the network's notifications (evt_<uuid>),
// made at now.
func NewEventID(now time.Time) string { return "evt_" + ids.NewV7(now) }

// NotifiedTransactionID returns the id of the transaction that the
// network's notification eventID reports, named after it: the same
// notification sent again is about the same transaction.
func NotifiedTransactionID(eventID string) string {
	return "ntx_" + strings.TrimPrefix(eventID, "evt_")
}
