package cards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

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
// authorization a moves, asked (0 for the default: the whole hold, or for
// a settlement of an expired authorization its whole amount; all that was
// settled and not refunded), or why a's state forbids it. It is what a
// card network would send of its own, which the sandbox routes check
// before they ask it: a settlement may take more than the hold (a tip, a
// final amount), and settles an authorization still holding, or expired
// (its hold released, still capturable); a reversal releases at most what
// is held; a refund gives back at most what was settled and not refunded.
// What an issuer reports is never refused for these reasons (follow).
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
	capturable := a.Hold > 0 || a.Expired && typ == TxSettlement
	switch {
	case !capturable && a.Settled > 0:
		return 0, ErrAlreadySettled
	case !capturable:
		return 0, ErrAlreadyReversed
	case asked > 0 && typ == TxReversal && asked > a.Hold:
		return 0, ErrExceedsHold
	case asked > 0:
		return asked, nil
	case a.Hold > 0:
		return a.Hold, nil
	}
	return a.Amount, nil
}

// settlementStep suffixes the claim of the first step of a settlement
// abroad: the settlement itself, written before its cross-border fee (the
// claim itself claims the fee, and names the settlement).
const settlementStep = "#settlement"

// errNotYet is a notification that follows what is not recorded yet (a
// settlement or a reversal before its authorization: the queue does not
// keep their order): it fails, and the queue delivers it again after its
// visibility timeout; one still failing after the queue's receives lands
// in its dead-letter queue, and the reconciliation finds it.
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

// claimOf returns what claims notification n's movement, so that it is
// applied once whatever reports it (the event, its redelivery, the
// reconciliation): a settlement's, a refund's and a reversal's own
// transaction id (the issuer's object: Stripe's ipi_…, or the release or
// partial reversal of an iauth_… it names); any other's event id.
func claimOf(n issuer.Notification) string {
	if t := n.Transaction; t != nil && t.ID != "" && followTypes[n.Type] != "" {
		return t.ID
	}
	return n.ID
}

// follow writes a settlement, a reversal or a refund the issuer reported
// on card, once per its claim (claimOf), from fresh reads until it wins
// its race. The issuer's money is the truth: nothing it reports is
// refused for what our records hold (settleRecord, reverseRecord,
// refundRecord say what each moves). A settlement abroad with a fee is
// written in two steps, each claimed once: the settlement, then its
// cross-border fee (crossBorderFee); a delivery that finds the first step
// written, by an earlier delivery or a concurrent one, writes the second.
// Two transactions keep each within the items DynamoDB Local takes in one
// (10), whatever the fee's sources.
func (s *Service) follow(ctx context.Context, card Card, n issuer.Notification) error {
	typ := followTypes[n.Type]
	lost := fmt.Errorf("%s %s: %w", n.Type, n.ID, ErrChanged)
	claim := claimOf(n)
	_, err := contention.Retry.Do(ctx, func(ctx context.Context) (bool, error) {
		orig, err := s.followed(ctx, card, n)
		if err != nil {
			return false, err
		}
		merchant := merchantOf(n.Transaction.Merchant)
		if orig != nil {
			merchant = orig.Merchant
		}
		first, abroad := claim, typ == TxSettlement && crossBorder(merchant)
		if abroad {
			first += settlementStep
			if done, err := s.settled(ctx, card, first, claim); done || err != nil {
				return false, err
			}
		}
		var fee int64
		if abroad {
			if fee, err = s.fee(ctx, card.CompanyID, fees.TypeCardCrossBorder, n.Transaction.Amount); err != nil {
				return false, err
			}
			if fee <= 0 {
				first, abroad = claim, false
			}
		}
		var rec Record
		switch typ {
		case TxSettlement:
			rec, err = s.settleRecord(ctx, card, orig, n)
		case TxReversal:
			rec, err = s.reverseRecord(ctx, card, *orig, n)
		default:
			rec, err = s.refundRecord(ctx, card, orig, n)
		}
		if err != nil {
			return false, err
		}
		rec.EventID = first
		err = s.record(ctx, rec)
		switch {
		case err == nil && abroad:
			return false, s.crossBorderFee(ctx, card, rec.made(), claim, fee)
		case errors.Is(err, ErrEventApplied) && abroad:
			_, err = s.settled(ctx, card, first, claim)
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

// followed reads the authorization notification n follows on card: nil
// for a settlement the network forced with none, and for a refund linked
// to none or to one we do not have (the issuer credits it all the same:
// the link is kept for reporting, never a condition); errNotYet for a
// settlement or a reversal whose authorization is not recorded yet.
func (s *Service) followed(ctx context.Context, card Card, n issuer.Notification) (*Transaction, error) {
	id := n.Transaction.AuthorizationID
	if id == "" {
		return nil, nil
	}
	orig, err := s.Store.NetworkTransaction(ctx, card.CompanyID, id)
	switch {
	case errors.Is(err, ErrTransactionNotFound) && n.Type == issuer.NotifyRefund:
		slog.WarnContext(ctx, "a refund of an authorization we do not have: credited as linked to none", "event_id", n.ID, "authorization_id", id)
		return nil, nil
	case errors.Is(err, ErrTransactionNotFound):
		return nil, fmt.Errorf("%s %s of %s: %w", n.Type, n.ID, id, errNotYet)
	case err != nil:
		return nil, err
	case orig.CardID != card.ID:
		return nil, ErrTransactionNotFound
	}
	return &orig, nil
}

// settled finishes a settlement abroad whose first step, claimed by first,
// is written: it writes the cross-border fee, claimed by claim. done is
// false when the first step is not written.
func (s *Service) settled(ctx context.Context, card Card, first, claim string) (done bool, err error) {
	o, found, err := s.Store.Outcome(ctx, card.CompanyID, first)
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
	return true, s.crossBorderFee(ctx, card, st.ID, claim, fee)
}

// settleRecord returns what settlement n writes on card, of authorization
// orig (nil for a capture the network forced with none): the card pays
// the issuer's amount, whatever the hold, as fees are paid (take): from
// what the card has for it (its available balance, with what the
// settlement releases of the hold), then the USD wallet, the rest a debt.
// It releases of the hold what it settles, or all of it when it closes the
// authorization; the rest stays held for a later capture. On a terminated
// card, whose balance keeps only what its holds need, what the release
// frees and the payment does not use goes to the USD wallet.
func (s *Service) settleRecord(ctx context.Context, card Card, orig *Transaction, n issuer.Notification) (Record, error) {
	now := s.now()
	amount := n.Transaction.Amount
	tx := s.networkTx(card, TxSettlement, n.Transaction, now)
	tx.Status, tx.CompletedAt = TxSuccess, &now
	rec := Record{EventID: claimOf(n), Card: card, Now: now}
	var released int64
	if orig != nil {
		tx.OriginalID, tx.Merchant, tx.Description = orig.ID, orig.Merchant, orig.Description
		released = min(amount, orig.Hold)
		after := *orig
		if n.Transaction.Close {
			// Closed: nothing more is captured of it, expired or not.
			released, after.Expired = orig.Hold, false
		}
		after.Hold, after.Settled = orig.Hold-released, orig.Settled+amount
		if after.Hold == 0 {
			after.Status, after.CompletedAt = TxSuccess, &now
		}
		rec.Original, rec.OriginalAfter, rec.HeldDelta = orig, &after, -released
	}
	backed := max(card.Available()+released, 0)
	p, err := s.take(ctx, &rec, &tx, amount, backed, wallets.TypeTransfer, ids.NewV7(now), events.FeeTypeCardSettlement)
	if err != nil {
		return Record{}, err
	}
	if !card.Status.Live() {
		if err := s.payOut(ctx, &rec, &tx, min(released, backed)-p.fromCard); err != nil {
			return Record{}, err
		}
	}
	rec.Txs = []Transaction{tx}
	return rec, s.addEvents(&rec, append([]events.Payload{events.TransactionSettlementCompletedData{RelatedCardTransaction: related(tx)}}, p.events(&tx)...)...)
}

// reverseRecord returns what a release of released of authorization
// orig's hold writes on card (a reversal, an expiry): a REVERSAL; on a
// terminated card, the released money goes to the USD wallet. Releasing
// nothing (the hold is gone: settled, released before) writes no
// transaction: the notification is claimed, nothing moves.
func (s *Service) reverseRecord(ctx context.Context, card Card, orig Transaction, n issuer.Notification) (Record, error) {
	now := s.now()
	released := orig.Hold
	if a := n.Transaction.Amount; a > 0 {
		released = min(a, orig.Hold)
	}
	after := orig
	after.Hold -= released
	if after.Hold == 0 {
		after.Status, after.CompletedAt = TxSuccess, &now
	}
	after.Expired = after.Expired || n.Reason == issuer.ReleaseExpired
	rec := Record{EventID: n.ID, Card: card, Original: &orig, OriginalAfter: &after, HeldDelta: -released, Now: now}
	if released == 0 {
		rec.Made = orig.ID
		return rec, nil
	}
	nt := issuer.NetworkTransaction{ID: n.Transaction.ID, Amount: released, Currency: Currency}
	tx := s.networkTx(card, TxReversal, &nt, now)
	tx.Status, tx.CompletedAt, tx.OriginalID = TxSuccess, &now, orig.ID
	tx.Merchant, tx.Description = orig.Merchant, orig.Description
	if !card.Status.Live() {
		if err := s.payOut(ctx, &rec, &tx, min(released, max(card.Available()+released, 0))); err != nil {
			return Record{}, err
		}
	}
	rev := events.TransactionReversalCompletedData{RelatedCardTransaction: related(tx)}
	if n.Reason != "" { // an expiry's, a stand-in's release, a closed authorization's
		rev.Reason = &n.Reason
	}
	rec.Txs = []Transaction{tx}
	return rec, s.addEvents(&rec, rev)
}

// refundRecord returns what refund n writes on card, of authorization
// orig (nil for one linked to none): the issuer's amount credited to the
// card, or to the USD wallet when the card is terminated (money never
// reaches a terminated card); the authorization counts it as refunded.
func (s *Service) refundRecord(ctx context.Context, card Card, orig *Transaction, n issuer.Notification) (Record, error) {
	now := s.now()
	amount := n.Transaction.Amount
	tx := s.networkTx(card, TxRefund, n.Transaction, now)
	tx.Status, tx.CompletedAt = TxSuccess, &now
	rec := Record{EventID: claimOf(n), Card: card, Now: now}
	if orig != nil {
		tx.OriginalID, tx.Merchant, tx.Description = orig.ID, orig.Merchant, orig.Description
		after := *orig
		after.Refunded += amount
		rec.Original, rec.OriginalAfter = orig, &after
	}
	if tx.Description == "" {
		tx.Description = "Refund"
	}
	if card.Status.Live() {
		tx.CardDelta, rec.BalanceDelta = amount, amount
	} else if err := s.payOut(ctx, &rec, &tx, amount); err != nil {
		return Record{}, err
	}
	rec.Txs = []Transaction{tx}
	return rec, s.addEvents(&rec, events.TransactionRefundCompletedData{RelatedCardTransaction: related(tx)})
}

// payOut sends amount of card transaction tx to the company's USD wallet
// (a REFUND entry): the money of a terminated card, which never keeps any
// but what its holds need. What leaves the card (a release's: all but a
// refund's, which never reached it) is taken off its balance.
func (s *Service) payOut(ctx context.Context, rec *Record, tx *Transaction, amount int64) error {
	if amount <= 0 {
		return nil
	}
	w, err := s.Wallets.USDWallet(ctx, tx.CompanyID)
	if err != nil {
		return fmt.Errorf("cards: read the USD wallet for terminated card %s: %w", tx.CardID, err)
	}
	if tx.Type != TxRefund {
		tx.CardDelta, rec.BalanceDelta = tx.CardDelta-amount, rec.BalanceDelta-amount
	}
	tx.WalletID, tx.WalletDelta, rec.WalletID = w.ID, tx.WalletDelta+amount, w.ID
	rec.Wallet.Payout += amount
	rec.Entries = append(rec.Entries, entry(*tx, wallets.TypeRefund, amount, ids.NewV7(rec.Now), rec.Now))
	return nil
}

// merchantOf returns a network merchant as a card transaction's.
func merchantOf(m *issuer.Merchant) *Merchant {
	if m == nil {
		return nil
	}
	return &Merchant{Name: m.Name, City: m.City, Country: m.Country}
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
