package cards

import (
	"context"
	"errors"
	"fmt"

	"payments/pkg/contention"
	"payments/pkg/events"
	"payments/pkg/fees"
	"payments/pkg/ids"
	"payments/pkg/providers/issuer"
	"payments/pkg/wallets"
)

// followTypes maps the notifications that follow an authorization to the
// card transaction each writes.
var followTypes = map[string]TxType{
	issuer.NotifySettlement: TxSettlement,
	issuer.NotifyReversal:   TxReversal,
	issuer.NotifyRefund:     TxRefund,
}

// CheckFollow returns the amount a settlement, reversal or refund (typ) of
// authorization a moves, asked (0 for all: the whole hold, or all that
// was settled and not refunded), or why a's state forbids it. It is the
// one rule of what may follow an authorization, checked by the sandbox
// routes before they ask the network and by the card-worker when it
// writes.
func CheckFollow(typ TxType, a Transaction, asked int64) (int64, error) {
	if a.Type != TxAuthorization || a.Kind == KindVerification {
		return 0, ErrNotAuthorization
	}
	if typ == TxRefund {
		left := a.Settled - a.Refunded
		switch {
		case a.Settled == 0:
			return 0, ErrNotSettled
		case asked == 0 && left > 0:
			return left, nil
		case asked == 0 || asked > left:
			return 0, ErrExceedsSettled
		}
		return asked, nil
	}
	switch {
	case a.Hold == 0 && a.Settled > 0:
		return 0, ErrAlreadySettled
	case a.Hold == 0:
		return 0, ErrAlreadyReversed
	case typ == TxReversal || asked == 0:
		return a.Hold, nil
	case asked > a.Hold:
		return 0, ErrExceedsHold
	}
	return asked, nil
}

// settlementStep suffixes the event id that claims the first step of a
// settlement abroad: the settlement itself, written before its
// cross-border fee (the event id itself claims the fee, and names the
// settlement).
const settlementStep = "#settlement"

// errNotYet is a notification that follows what is not recorded yet (a
// settlement before its authorization, a refund before its settlement:
// the queue does not keep their order): it fails, and the queue delivers
// it again after its visibility timeout; one still failing after the
// queue's receives lands in its dead-letter queue.
var errNotYet = errors.New("cards: what the notification follows is not recorded yet")

// notifyOf returns the notification type that writes typ.
func notifyOf(typ TxType) string {
	for n, t := range followTypes {
		if t == typ {
			return n
		}
	}
	return ""
}

// follow writes a settlement, a reversal or a refund the network reported
// on one of card's authorizations, from fresh reads until it wins its race.
// A settlement abroad with a fee is written in two steps, each claimed
// once: the settlement, then its cross-border fee (crossBorderFee); a
// delivery that finds the first step written, by an earlier delivery or a
// concurrent one, writes the second. Two transactions keep each within the
// items DynamoDB Local takes in one (10), whatever the fee's sources.
func (s *Service) follow(ctx context.Context, card Card, n issuer.Notification) error {
	typ := followTypes[n.Type]
	lost := fmt.Errorf("%s %s: %w", n.Type, n.ID, ErrChanged)
	_, err := contention.Retry.Do(ctx, func(ctx context.Context) (bool, error) {
		orig, err := s.Store.NetworkTransaction(ctx, card.CompanyID, n.Transaction.AuthorizationID)
		switch {
		case errors.Is(err, ErrTransactionNotFound):
			return false, fmt.Errorf("%s %s of %s: %w", n.Type, n.ID, n.Transaction.AuthorizationID, errNotYet)
		case err != nil:
			return false, err
		case orig.CardID != card.ID:
			return false, ErrTransactionNotFound
		}
		claim, abroad := n.ID, typ == TxSettlement && crossBorder(orig.Merchant)
		if abroad {
			claim += settlementStep
			if done, err := s.settled(ctx, card, claim, n.ID); done || err != nil {
				return false, err
			}
		}
		amount, err := CheckFollow(typ, orig, n.Transaction.Amount)
		switch {
		case errors.Is(err, ErrNotSettled):
			return false, fmt.Errorf("%s %s: %w", n.Type, n.ID, errNotYet)
		case err != nil && abroad:
			// A concurrent delivery may have written the first step.
			if done, serr := s.settled(ctx, card, claim, n.ID); done || serr != nil {
				return false, serr
			}
			return false, err
		case err != nil:
			return false, err
		}
		var fee int64
		if abroad {
			if fee, err = s.fee(ctx, card.CompanyID, fees.TypeCardCrossBorder, amount); err != nil {
				return false, err
			}
			if fee <= 0 {
				claim, abroad = n.ID, false
			}
		}
		rec, err := s.followRecord(ctx, card, orig, typ, amount, n)
		if err != nil {
			return false, err
		}
		rec.EventID = claim
		err = s.record(ctx, rec)
		switch {
		case err == nil && abroad:
			return false, s.crossBorderFee(ctx, card, rec.Txs[0].ID, n.ID, fee)
		case errors.Is(err, ErrEventApplied) && abroad:
			_, err = s.settled(ctx, card, claim, n.ID)
			return false, err
		case !errors.Is(err, ErrChanged) && !errors.Is(err, ErrCardRefused):
			return false, err
		}
		if card, err = s.Store.Card(ctx, card.CompanyID, card.ID); err != nil {
			return false, err
		}
		return true, lost
	})
	return err
}

// settled finishes a settlement abroad whose first step, claimed by claim,
// is written: it writes the cross-border fee, claimed by eventID. done is
// false when the first step is not written.
func (s *Service) settled(ctx context.Context, card Card, claim, eventID string) (done bool, err error) {
	o, found, err := s.Store.Outcome(ctx, card.CompanyID, claim)
	if err != nil || !found {
		return false, err
	}
	st, err := s.Store.Transaction(ctx, card.CompanyID, o.TxID)
	if err != nil {
		return true, err
	}
	fee, err := s.fee(ctx, card.CompanyID, fees.TypeCardCrossBorder, st.Amount)
	if err != nil {
		return true, err
	}
	return true, s.crossBorderFee(ctx, card, st.ID, eventID, fee)
}

// followRecord returns what a settlement, reversal or refund of amount on
// authorization orig writes.
func (s *Service) followRecord(ctx context.Context, card Card, orig Transaction, typ TxType, amount int64, n issuer.Notification) (Record, error) {
	now := s.now()
	nt := *n.Transaction
	nt.Amount, nt.Merchant = amount, nil
	tx := s.networkTx(card, typ, &nt, now)
	tx.Status, tx.CompletedAt, tx.OriginalID = TxSuccess, &now, orig.ID
	tx.Merchant, tx.Description = orig.Merchant, orig.Description
	after := orig
	rec := Record{EventID: n.ID, Card: card, Original: &orig, OriginalAfter: &after, Now: now}
	// released is what the write frees of the hold without paying it out.
	var released int64
	switch typ {
	case TxSettlement:
		tx.CardDelta = -amount
		after.Hold, after.Settled, after.Status, after.CompletedAt = 0, amount, TxSuccess, &now
		rec.BalanceDelta, rec.HeldDelta = -amount, -orig.Hold
		released = orig.Hold - amount
	case TxReversal:
		after.Hold, after.Status, after.CompletedAt = 0, TxSuccess, &now
		rec.HeldDelta = -orig.Hold
		released = orig.Hold
	case TxRefund:
		after.Refunded += amount
		tx.CardDelta, rec.BalanceDelta = amount, amount
	}
	if !card.Status.Live() {
		// Money never stays on a terminated card (FinishTermination): what
		// a refund gives goes to the wallet the card's balance went to, and
		// so does what a hold's release frees, taken from the card.
		moved := released
		if typ == TxRefund {
			tx.CardDelta, rec.BalanceDelta, moved = 0, 0, amount
		} else {
			tx.CardDelta, rec.BalanceDelta = tx.CardDelta-released, rec.BalanceDelta-released
		}
		if moved > 0 {
			w, err := s.Wallets.USDWallet(ctx, card.CompanyID)
			if err != nil {
				return Record{}, fmt.Errorf("cards: read the USD wallet for terminated card %s: %w", card.ID, err)
			}
			tx.WalletID, tx.WalletDelta, rec.WalletID = w.ID, moved, w.ID
			rec.Wallet, rec.Entries = credit(tx, wallets.TypeRefund, moved, now)
		}
	}
	var p events.Payload
	switch typ {
	case TxSettlement:
		p = events.TransactionSettlementCompletedData{RelatedCardTransaction: related(tx)}
	case TxReversal:
		rev := events.TransactionReversalCompletedData{RelatedCardTransaction: related(tx)}
		if n.Reason != "" { // ours: an expiry, or a stand-in's release
			rev.Reason = &n.Reason
		}
		p = rev
	case TxRefund:
		p = events.TransactionRefundCompletedData{RelatedCardTransaction: related(tx)}
	}
	rec.Txs = []Transaction{tx}
	return rec, s.addEvents(&rec, p)
}

// crossBorder reports whether a purchase at m crossed the card's border.
func crossBorder(m *Merchant) bool { return m != nil && m.Country != "" && m.Country != CardCountry }

// crossBorderFee writes the CROSS-BORDER transaction of settlement
// settlementID, claimed by eventID (which then names the settlement), with
// its fee taken from the card as it is now, then the wallet, then a debt.
func (s *Service) crossBorderFee(ctx context.Context, card Card, settlementID, eventID string, fee int64) error {
	st, err := s.Store.Transaction(ctx, card.CompanyID, settlementID)
	if err != nil {
		return err
	}
	lost := fmt.Errorf("cross-border fee of %s: %w", settlementID, ErrChanged)
	_, err = contention.Retry.Do(ctx, func(ctx context.Context) (bool, error) {
		if card, err = s.Store.Card(ctx, card.CompanyID, card.ID); err != nil {
			return false, err
		}
		now := s.now()
		cb := st
		cb.ID, cb.Type, cb.Amount, cb.CardDelta, cb.WalletDelta, cb.IssuerTxID, cb.OriginalID = ids.NewV7(now), TxCrossBorder, fee, 0, 0, "", st.ID
		cb.CreatedAt, cb.CompletedAt = now, &now
		rec := Record{EventID: eventID, Made: st.ID, Card: card, Now: now}
		charged, err := s.chargeFee(ctx, &rec, &cb, fee, st.Amount, card.Available(), events.FeeTypeCrossborder)
		if err != nil {
			return false, err
		}
		rec.Txs = []Transaction{cb}
		if err := s.addEvents(&rec, append([]events.Payload{events.TransactionCrossborderChargedData{RelatedCardTransaction: related(cb)}}, charged...)...); err != nil {
			return false, err
		}
		err = s.record(ctx, rec)
		if !errors.Is(err, ErrChanged) && !errors.Is(err, ErrCardRefused) {
			return false, err
		}
		return true, lost
	})
	return err
}

// related is the event data of tx, which follows tx.OriginalID.
func related(tx Transaction) events.RelatedCardTransaction {
	id := tx.OriginalID
	return events.RelatedCardTransaction{CardTransaction: cardTxEvent(tx), OriginalTransactionID: &id}
}
