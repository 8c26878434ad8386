package issuer

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
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
	// Reason says why, for a termination.
	Reason    string    `json:"reason,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// NetworkTransaction is a transaction of the card network.
type NetworkTransaction struct {
	// ID is the network's id of this transaction; AuthorizationID, for a
	// settlement, a reversal or a refund, the authorization it follows.
	ID              string `json:"id"`
	AuthorizationID string `json:"authorization_id,omitempty"`
	// Kind of an authorization: AUTHORIZATION, PREAUTHORIZATION or
	// VERIFICATION.
	Kind     string    `json:"kind,omitempty"`
	Amount   int64     `json:"amount"`
	Currency string    `json:"currency"`
	Merchant *Merchant `json:"merchant,omitempty"`
}

// Merchant is where a card was used; Country is ISO 3166-1 alpha-2.
type Merchant struct {
	Name    string `json:"name"`
	City    string `json:"city"`
	Country string `json:"country"`
}

// Notification types.
const (
	// NotifyAuthorization asks for a decision on a card payment: approved,
	// it places a hold (none for a VERIFICATION); declined, it records the
	// decline and charges the failed-payment fee.
	NotifyAuthorization = "authorization"
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
)

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
// (its id, a known kind and a merchant for an authorization, the
// authorization it follows otherwise, an amount in USD: above 0, but for
// a verification, which has 0, and a reversal, which releases the whole
// hold) are required.
func ParseNotification(b []byte) (Notification, error) {
	var n Notification
	if err := json.Unmarshal(b, &n); err != nil {
		return Notification{}, fmt.Errorf("%w: %v", ErrBadNotification, err)
	}
	if err := n.check(); err != nil {
		return Notification{}, fmt.Errorf("%w: %v", ErrBadNotification, err)
	}
	return n, nil
}

func (n Notification) check() error {
	switch {
	case n.ID == "":
		return errors.New("no id")
	case n.Reference == "":
		return errors.New("no card reference")
	}
	switch n.Type {
	case NotifyCardTerminated:
		return nil
	case NotifyAuthorization, NotifySettlement, NotifyReversal, NotifyRefund:
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
	case t.Amount == 0 && n.Type != NotifyReversal && t.Kind != KindVerification:
		return errors.New("amount 0")
	case n.Type == NotifyAuthorization && t.Kind != KindAuthorization && t.Kind != KindPreauthorization && t.Kind != KindVerification:
		return fmt.Errorf("unknown authorization kind %q", t.Kind)
	case n.Type == NotifyAuthorization && t.Kind == KindVerification && t.Amount != 0:
		return errors.New("a verification has amount 0")
	case n.Type == NotifyAuthorization && t.Merchant == nil:
		return errors.New("no merchant")
	case n.Type != NotifyAuthorization && t.AuthorizationID == "":
		return errors.New("no authorization id")
	}
	return nil
}
