package cards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"payments/pkg/contention"
	"payments/pkg/events"
	"payments/pkg/ids"
	"payments/pkg/providers/issuer"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// This file applies the issuer's reports of a dispute (issuer.NotifyDispute,
// the dispute as the issuer has it now): the card follows what the issuer
// has credited for it.
//
// A report is applied only when it moves the dispute forward (forward):
// to a later status (SUBMITTED, then WON or LOST), or, in the same status,
// its credit the way that status moves it (up while SUBMITTED or WON: a
// provisional credit, the funds of a win; down once LOST: the credit taken
// back). The issuer's reports carry no sequence of their own, and arrive
// in any order, again and again (a redelivery, a replay, the
// reconciliation): an older report read after a newer one is never
// forward, so money never moves backwards, and the dispute's record is the
// claim of each movement by the issuer's own dispute id. Its write is
// conditioned on the dispute's event count and credit as read
// (DisputeMove): two deliveries of one report move the money once.

// disputeRank orders the dispute statuses for forward.
func disputeRank(st DisputeStatus) int {
	switch st {
	case DisputeSubmitted:
		return 1
	case DisputeWon, DisputeLost:
		return 2
	}
	return 0
}

// forward reports whether the issuer's dispute nd moves d forward: a later
// status, or in the same status its credit the status's way. A decided
// dispute is never decided otherwise.
func forward(d Dispute, nd issuer.Dispute) bool {
	to := DisputeStatus(nd.Status)
	switch {
	case disputeRank(to) != disputeRank(d.Status):
		return disputeRank(to) > disputeRank(d.Status)
	case to != d.Status:
		return false
	case to == DisputeLost:
		return nd.Credited < d.Credited
	}
	return nd.Credited > d.Credited
}

// applyDispute applies the issuer's report n of a dispute of card's
// settlements: the dispute is found by the issuer's id, or by our id (a
// dispute we opened whose answer the report overtook), or created (a
// dispute opened at the issuer without us); then, if the report moves it
// forward, its new state is written with the money its credit's change
// moves (disputeMove), from fresh reads until it wins its race. Last, the
// issuer is told what the dispute's movements moved on the card
// (tellDispute), again on every delivery.
func (s *Service) applyDispute(ctx context.Context, card Card, n issuer.Notification) error {
	nd := *n.Dispute
	d, found, err := s.disputeOf(ctx, card, nd)
	if err != nil || !found {
		return err
	}
	lost := fmt.Errorf("dispute %s, issuer event %s: %w", d.ID, n.ID, ErrChanged)
	_, err = contention.Retry.Do(ctx, func(ctx context.Context) (bool, error) {
		if !forward(d, nd) {
			slog.InfoContext(ctx, "a dispute report that does not move it forward: nothing to apply", "dispute_id", d.ID,
				"event_id", n.ID, "status", d.Status, "credited", d.Credited, "reported_status", nd.Status, "reported_credited", nd.Credited)
			return false, nil
		}
		m, err := s.disputeMove(ctx, card, d, nd)
		if err != nil {
			return false, err
		}
		switch err := s.Store.MoveDispute(ctx, m); {
		case err == nil:
			d = m.After
			if m.Tx != nil {
				logRecorded(ctx, *m.Tx)
			}
			slog.InfoContext(ctx, "card dispute moved", "dispute_id", d.ID, "status", d.Status, "credited", d.Credited, "event_id", n.ID)
			s.publish(ctx, m.Events)
			return false, nil
		case !errors.Is(err, ErrChanged):
			return false, err
		}
		if d, err = s.Store.Dispute(ctx, d.CompanyID, d.ID); err != nil {
			return false, err
		}
		if card, err = s.Store.Card(ctx, card.CompanyID, card.ID); err != nil {
			return false, err
		}
		return true, lost
	})
	if err != nil {
		return err
	}
	return s.tellDispute(ctx, card, d)
}

// disputeOf returns the dispute the issuer's nd is, on card: by the
// issuer's id; by our id, its Reference, when we opened it (attaching the
// issuer's id to it if its answer has not yet); else a new one. found is
// false for a report that cannot be followed (a dispute of another card, or
// one the issuer refused us): it is logged and dropped.
func (s *Service) disputeOf(ctx context.Context, card Card, nd issuer.Dispute) (Dispute, bool, error) {
	d, found, err := s.Store.IssuerDispute(ctx, card.CompanyID, nd.ID)
	switch {
	case err != nil:
		return Dispute{}, false, err
	case found && d.CardID != card.ID:
		slog.ErrorContext(ctx, "the issuer reports a dispute of another card: dropped", "dispute_id", d.ID, "card_id", card.ID)
		return Dispute{}, false, nil
	case found:
		return d, true, nil
	}
	if validID(nd.Reference) {
		d, err := s.Store.Dispute(ctx, card.CompanyID, nd.Reference)
		switch {
		case errors.Is(err, ErrDisputeNotFound):
		case err != nil:
			return Dispute{}, false, err
		case d.CardID != card.ID || d.Status == DisputeFailed || d.IssuerDisputeID != "" && d.IssuerDisputeID != nd.ID:
			slog.ErrorContext(ctx, "the issuer reports a dispute we cannot follow: dropped", "dispute_id", d.ID,
				"status", d.Status, "issuer_dispute_id", nd.ID, "card_id", card.ID)
			return Dispute{}, false, nil
		case d.Status == DisputeOpening:
			if err := s.attachDispute(ctx, d, nd.ID); err != nil && !errors.Is(err, ErrChanged) {
				return Dispute{}, false, err
			}
			d, err = s.Store.Dispute(ctx, d.CompanyID, d.ID)
			return d, err == nil, err
		default:
			return d, true, nil
		}
	}
	return s.createDispute(ctx, card, nd)
}

// createDispute records dispute nd, which the issuer opened on card
// without us, SUBMITTED with nothing credited yet (card.dispute.created):
// its settlement is the card's transaction the issuer names, which claims
// it unless another dispute does. A settlement not recorded yet (its report
// and the dispute's arrive in any order) is errNotYet: the queue delivers
// the report again.
func (s *Service) createDispute(ctx context.Context, card Card, nd issuer.Dispute) (Dispute, bool, error) {
	st, err := s.Store.CardSettlement(ctx, card.CompanyID, card.ID, nd.TransactionID)
	switch {
	case errors.Is(err, ErrTransactionNotFound):
		return Dispute{}, false, fmt.Errorf("dispute %s of %s: %w", nd.ID, nd.TransactionID, errNotYet)
	case err != nil:
		return Dispute{}, false, err
	}
	var d Dispute
	_, err = contention.Retry.Do(ctx, func(ctx context.Context) (bool, error) {
		other, claimed, err := s.Store.TransactionDispute(ctx, card.CompanyID, st.ID)
		if err != nil {
			return false, err
		}
		if claimed {
			slog.WarnContext(ctx, "the issuer opened a second dispute of a settlement", "transaction_id", st.ID,
				"dispute_id", other.ID, "issuer_dispute_id", nd.ID)
		}
		now := s.now()
		d = Dispute{
			ID: ids.NewV7(now), CompanyID: card.CompanyID, CardID: card.ID, CustomerID: card.CustomerID,
			TransactionID: st.ID, IssuerTxID: st.IssuerTxID, IssuerDisputeID: nd.ID, Status: DisputeSubmitted,
			Amount: nd.Amount, CreatedAt: now, UpdatedAt: now,
		}
		ev, err := events.Build(d.CompanyID, events.CardDisputeCreatedData{CardDispute: d.event(), CreatedAt: timestamp.Format(now)}, now)
		if err != nil {
			return false, err
		}
		err = s.Store.CreateDispute(ctx, d, !claimed, []events.Event{ev})
		if err == nil {
			d.Seq = 1
			slog.InfoContext(ctx, "card dispute opened at the issuer", "dispute_id", d.ID, "issuer_dispute_id", nd.ID, "transaction_id", st.ID)
			s.publish(ctx, []events.Event{ev})
		}
		return errors.Is(err, ErrChanged), err
	})
	if errors.Is(err, ErrDisputeExists) {
		// A concurrent delivery created it first.
		return s.Store.IssuerDispute(ctx, card.CompanyID, nd.ID)
	}
	return d, err == nil, err
}

// disputeMove returns the write that moves d, on card as read, to the
// issuer's state nd: its status and amount, and the change of its credit
// moved by one DISPUTE card transaction. A credit goes to the card, or,
// the card terminated (a terminated card never takes money), to the USD
// wallet its balance went to; a credit taken back is taken from the card's
// available balance, then from the USD wallet's payout_available, and what
// neither has is owed as a debt (take, of type card_dispute).
func (s *Service) disputeMove(ctx context.Context, card Card, d Dispute, nd issuer.Dispute) (DisputeMove, error) {
	now := s.now()
	after := d
	after.Status, after.Amount, after.Credited, after.UpdatedAt = DisputeStatus(nd.Status), nd.Amount, nd.Credited, now
	m := DisputeMove{Dispute: d, Card: card, Now: now}
	var charged []events.Payload
	if delta := nd.Credited - d.Credited; delta != 0 {
		tx := s.newTx(card, TxDispute, max(delta, -delta), 0, now)
		tx.Status, tx.CompletedAt, tx.OriginalID = TxSuccess, &now, d.TransactionID
		// rec gathers what the movement does to the card and the wallet.
		rec := Record{Card: card, Now: now}
		if delta > 0 {
			tx.Description = "Dispute credit"
			if card.Status.Live() {
				tx.CardDelta, rec.BalanceDelta = delta, delta
			} else {
				w, err := s.Wallets.USDWallet(ctx, card.CompanyID)
				if err != nil {
					return DisputeMove{}, fmt.Errorf("cards: read the USD wallet for the dispute credit of terminated card %s: %w", card.ID, err)
				}
				tx.WalletID, tx.WalletDelta, rec.WalletID = w.ID, delta, w.ID
				rec.Wallet, rec.Entries = credit(tx, wallets.TypeRefund, delta, now)
			}
		} else {
			tx.Description = "Dispute credit taken back"
			backed := int64(0)
			if card.Status.Live() {
				backed = card.Available()
			}
			p, err := s.take(ctx, &rec, &tx, -delta, backed, wallets.TypeWithdraw, ids.NewV7(now), events.FeeTypeDispute)
			if err != nil {
				return DisputeMove{}, err
			}
			charged = p.events(&tx)
		}
		m.Tx, m.CardDelta, m.WalletID, m.Wallet, m.Entries, m.Debt = &tx, rec.BalanceDelta, rec.WalletID, rec.Wallet, rec.Entries, rec.Debt
		after.Movements = append(slices.Clone(d.Movements), DisputeMovement{TxID: tx.ID, CardDelta: tx.CardDelta})
	}
	m.After = after
	upd := events.CardDisputeUpdatedData{CardDispute: after.event(), PreviousStatus: string(d.Status), UpdatedAt: timestamp.Format(now)}
	if m.Tx != nil {
		upd.CardTransactionID = &m.Tx.ID
	}
	for _, p := range append([]events.Payload{upd}, charged...) {
		ev, err := events.Build(card.CompanyID, p, now)
		if err != nil {
			return DisputeMove{}, err
		}
		m.Events = append(m.Events, ev)
	}
	return m, nil
}

// tellDispute posts to the issuer what each of d's movements moved on
// card, each once whatever we repeat (its reference is its DISPUTE
// transaction's id): the issuer's card moves as ours did. Nothing for a
// movement that left the card alone (to or from the wallet, or a debt).
func (s *Service) tellDispute(ctx context.Context, card Card, d Dispute) error {
	for _, mv := range d.Movements {
		if err := s.post(ctx, card, mv.TxID, Outcome{BalanceDelta: mv.CardDelta}); err != nil {
			return err
		}
	}
	return nil
}
