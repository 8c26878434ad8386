package cards

import (
	"context"
	"encoding/json"

	"payments/pkg/field"
	"payments/pkg/providers/issuer"
)

// FollowInput is the body of what follows an authorization: Amount, the
// settlement's (it may be above the hold), the reversal's (at most what is
// held) or the refund's (at most what was settled and not refunded);
// absent for the default (CheckFollow). Final, on a settlement, closes
// the authorization (what is left of its hold released): true unless
// false, which keeps the rest held for a later settlement.
type FollowInput struct {
	Amount json.RawMessage `json:"amount"`
	Final  *bool           `json:"final"`
}

// RefundInput is the body of a refund linked to no authorization.
type RefundInput struct {
	Amount json.RawMessage `json:"amount"`
}

// Follow settles, reverses or refunds (typ) authorization txID of the
// company as in says; its state must allow it (CheckFollow), else nothing
// is asked of the network.
func (sb *Sandbox) Follow(ctx context.Context, companyID, txID string, typ TxType, in FollowInput) (Transaction, error) {
	tx, _, err := sb.FollowEvent(ctx, companyID, txID, typ, "", in)
	return tx, err
}

// Expire has the network expire authorization txID of the company: its
// hold released (reason expired), the authorization still capturable.
func (sb *Sandbox) Expire(ctx context.Context, companyID, txID string) (Transaction, error) {
	tx, _, err := sb.FollowEvent(ctx, companyID, txID, TxReversal, issuer.ReleaseExpired, FollowInput{})
	return tx, err
}

// FollowEvent is Follow, for a reversal with reason (an expiry's), answering
// also the id of the network's notification once it is sent.
func (sb *Sandbox) FollowEvent(ctx context.Context, companyID, txID string, typ TxType, reason string, in FollowInput) (Transaction, string, error) {
	var asked int64
	if reason != "" && (len(in.Amount) > 0 || in.Final != nil) {
		return Transaction{}, "", field.Invalid("body", "is not taken: an expiry releases the whole hold")
	}
	if in.Final != nil && typ != TxSettlement {
		return Transaction{}, "", field.Invalid("final", "is taken by a settlement only")
	}
	asked, err := parseCents("amount", in.Amount, false)
	if err != nil {
		return Transaction{}, "", err
	}
	if !validID(txID) {
		return Transaction{}, "", ErrTransactionNotFound
	}
	auth, err := sb.Cards.Store.Transaction(ctx, companyID, txID)
	if err != nil {
		return Transaction{}, "", err
	}
	card, err := sb.Cards.Store.Card(ctx, companyID, auth.CardID)
	if err != nil {
		return Transaction{}, "", err
	}
	amount, refused := CheckFollow(typ, auth, asked)
	t := issuer.NetworkTransaction{AuthorizationID: auth.IssuerTxID, Amount: amount, Close: typ == TxSettlement && (in.Final == nil || *in.Final)}
	return sb.notify(ctx, card, notifyOf(typ), t, reason, refused)
}

// Capture has the network settle amount on a card of the company with no
// authorization (a capture it forces), at the merchant in names: the
// card pays what it has, then the USD wallet, the rest a debt.
func (sb *Sandbox) Capture(ctx context.Context, companyID, cardID string, in AuthorizeInput) (Transaction, error) {
	tx, _, err := sb.CaptureEvent(ctx, companyID, cardID, in)
	return tx, err
}

// CaptureEvent is Capture, answering also the notification's id.
func (sb *Sandbox) CaptureEvent(ctx context.Context, companyID, cardID string, in AuthorizeInput) (Transaction, string, error) {
	if in.Type != "" {
		return Transaction{}, "", field.Invalid("type", "is not taken: a capture is a settlement")
	}
	amount, err := parseCents("amount", in.Amount, true)
	if err != nil {
		return Transaction{}, "", err
	}
	m, err := in.merchant()
	if err != nil {
		return Transaction{}, "", err
	}
	card, err := sb.issued(ctx, companyID, cardID)
	if err != nil {
		return Transaction{}, "", err
	}
	return sb.notify(ctx, card, issuer.NotifySettlement, issuer.NetworkTransaction{Amount: amount, Merchant: &m}, "", nil)
}

// Refund has the network refund amount to a card of the company, linked
// to no authorization: credited to the card (to the USD wallet when the
// card is terminated).
func (sb *Sandbox) Refund(ctx context.Context, companyID, cardID string, in RefundInput) (Transaction, error) {
	tx, _, err := sb.RefundEvent(ctx, companyID, cardID, in)
	return tx, err
}

// RefundEvent is Refund, answering also the notification's id.
func (sb *Sandbox) RefundEvent(ctx context.Context, companyID, cardID string, in RefundInput) (Transaction, string, error) {
	amount, err := parseCents("amount", in.Amount, true)
	if err != nil {
		return Transaction{}, "", err
	}
	card, err := sb.issued(ctx, companyID, cardID)
	if err != nil {
		return Transaction{}, "", err
	}
	return sb.notify(ctx, card, issuer.NotifyRefund, issuer.NetworkTransaction{Amount: amount}, "", nil)
}

// issued reads a card of the company that the issuer issued (a network
// moves money on cards it knows, terminated ones included).
func (sb *Sandbox) issued(ctx context.Context, companyID, cardID string) (Card, error) {
	card, err := sb.Cards.card(ctx, companyID, cardID)
	if err != nil {
		return Card{}, err
	}
	if card.IssuerCardID == "" {
		return Card{}, ErrNotActive
	}
	return card, nil
}

// notify has the network report t (a notification of type typ, with
// reason) on card, under the network id the request holds (networkID),
// and waits for it to be applied; refused is why the authorization's state
// forbids it: nothing is asked of the network, but a retry whose first
// run's notification was applied (what moved the authorization on)
// answers that.
func (sb *Sandbox) notify(ctx context.Context, card Card, typ string, t issuer.NetworkTransaction, reason string, refused error) (Transaction, string, error) {
	id, again, err := sb.networkID(ctx, issuer.NewEventID)
	if err != nil {
		return Transaction{}, "", err
	}
	sent := issuer.Notification{ID: id, Type: typ, Transaction: &issuer.NetworkTransaction{ID: issuer.NotifiedTransactionID(id)}}
	if refused != nil {
		if !again {
			return Transaction{}, "", refused
		}
		if _, found, err := sb.Cards.Store.Outcome(ctx, card.CompanyID, claimOf(sent)); err == nil && !found {
			return Transaction{}, "", refused
		}
		tx, err := sb.await(ctx, card, sent)
		return tx, id, err
	}
	if sent, err = sb.Network.Follow(ctx, id, typ, card.IssuerCardID, card.ID, t, reason); err != nil {
		return Transaction{}, "", err
	}
	tx, err := sb.await(ctx, card, sent)
	return tx, id, err
}
