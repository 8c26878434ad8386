package cards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"payments/pkg/contention"
	"payments/pkg/events"
	"payments/pkg/field"
	"payments/pkg/idempotency"
	"payments/pkg/money"
	"payments/pkg/providers/issuer"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// Freeze makes an ACTIVE card of the company FROZEN (spec §3.3, §4.21):
// no new authorizations, the balance kept. lock also sets our deeper lock,
// which only unfreezing with unlock=true lifts. The issuer is told; when it
// cannot be, the card is left as it was and the answer is
// ErrIssuerUnavailable.
func (s *Service) Freeze(ctx context.Context, companyID, cardID string, lock bool) (Card, error) {
	card, err := s.stateCheck(ctx, companyID, cardID)
	if err != nil {
		return Card{}, err
	}
	switch card.Status {
	case Active:
	case Frozen:
		return Card{}, ErrAlreadyFrozen
	default:
		return Card{}, ErrNotActive
	}
	return s.setStatus(ctx, card, Frozen, lock, s.Issuer.FreezeCard)
}

// Unfreeze makes a FROZEN card of the company ACTIVE (spec §4.22); a locked
// card needs unlock (ErrLocked).
func (s *Service) Unfreeze(ctx context.Context, companyID, cardID string, unlock bool) (Card, error) {
	card, err := s.stateCheck(ctx, companyID, cardID)
	if err != nil {
		return Card{}, err
	}
	switch {
	case card.Status != Frozen:
		return Card{}, ErrNotFrozen
	case card.IsLocked && !unlock:
		return Card{}, ErrLocked
	}
	return s.setStatus(ctx, card, Active, false, s.Issuer.UnfreezeCard)
}

// stateCheck reads a card whose state is to change: ErrTerminated once it
// is terminated.
func (s *Service) stateCheck(ctx context.Context, companyID, cardID string) (Card, error) {
	if s.Issuer == nil {
		return Card{}, ErrNoIssuer
	}
	card, err := s.card(ctx, companyID, cardID)
	if err != nil {
		return Card{}, err
	}
	if card.Status == Terminated {
		return Card{}, ErrTerminated
	}
	return card, nil
}

// setStatus moves card to status to with its lock, then tells the issuer
// with tell; an issuer that fails puts the card back.
func (s *Service) setStatus(ctx context.Context, card Card, to Status, locked bool, tell func(context.Context, string) (issuer.Card, error)) (Card, error) {
	after, err := s.Store.SetStatus(ctx, card.CompanyID, card.ID, card.Status, to, locked, s.now())
	if err != nil {
		return Card{}, err
	}
	if _, err := tell(ctx, card.IssuerCardID); err != nil && !errors.Is(err, issuer.ErrCardState) {
		if _, rerr := s.Store.SetStatus(context.WithoutCancel(ctx), card.CompanyID, card.ID, to, card.Status, card.IsLocked, s.now()); rerr != nil {
			slog.ErrorContext(ctx, "put a card back after the issuer failed", "card_id", card.ID, "error", rerr)
		}
		return Card{}, fmt.Errorf("%w: %w", ErrIssuerUnavailable, err)
	}
	slog.InfoContext(ctx, "card status changed", "card_id", card.ID, "from", card.Status, "to", to, "locked", locked)
	return after, nil
}

// TerminateInput is the body of POST /cards/{id}/terminate.
type TerminateInput struct {
	Reason string `json:"reason"`
}

// maxReason bounds the reason of a termination, in characters.
const maxReason = 255

// Terminate ends a card of the company for good (spec §6.4): from ACTIVE,
// FROZEN, SUSPENDED or PENDING, the issuer closes the card
// (ErrIssuerUnavailable when it cannot be asked: nothing changes), then one
// transaction, whatever the card's history, makes it TERMINATED and
// refunds to the USD wallet what no open hold keeps, with card.terminated
// and transaction.terminated (terminate). The card keeps what its open
// holds keep until the sweeper has released them to the wallet
// (FinishTermination).
func (s *Service) Terminate(ctx context.Context, companyID, cardID string, in TerminateInput) (Card, Transaction, error) {
	if e, ok := idempotency.Replaying(ctx); ok {
		return s.replayTermination(ctx, companyID, e)
	}
	reason := strings.TrimSpace(in.Reason)
	if len([]rune(reason)) > maxReason {
		return Card{}, Transaction{}, field.Invalid("reason", fmt.Sprintf("must be at most %d characters", maxReason))
	}
	if reason == "" {
		reason = events.TerminationReasonCompany
	}
	card, err := s.stateCheck(ctx, companyID, cardID)
	if err != nil {
		return Card{}, Transaction{}, err
	}
	if card.Status == Failed {
		return Card{}, Transaction{}, ErrNotActive
	}
	if card.IssuerCardID != "" {
		// The issuer first: once it has closed the card nothing can be
		// spent at it, and the refund below is safe. Terminating is
		// idempotent there, so a termination that fails after this is
		// simply asked again.
		if _, _, err := s.Issuer.TerminateCard(ctx, card.IssuerCardID); err != nil && !errors.Is(err, issuer.ErrNotFound) {
			return Card{}, Transaction{}, fmt.Errorf("%w: %w", ErrIssuerUnavailable, err)
		}
	}
	return s.terminate(ctx, card, reason, "")
}

// terminate writes the termination of card as read, by the company or,
// with the issuer's event id, as the issuer reported it (once per event);
// card.terminated takes the matching form. It is one transaction, however
// many holds the card has open: the card TERMINATED, on which nothing is
// approved any more, keeping what its open holds keep (its Held), and the
// rest (its Available) refunded. The holds are the sweeper's to release
// (FinishTermination). A card changed in between is read again.
func (s *Service) terminate(ctx context.Context, card Card, reason, issuerEvent string) (Card, Transaction, error) {
	var t Termination
	first := true
	_, err := contention.Retry.Do(ctx, func(ctx context.Context) (bool, error) {
		if !first {
			// An authorization or a settlement moved the card in
			// between: read it again, a little later (the policy's wait).
			var err error
			if card, err = s.Store.Card(ctx, card.CompanyID, card.ID); err != nil {
				return false, err
			}
			if !card.Status.Live() {
				return false, ErrTerminated
			}
		}
		first = false
		var err error
		if t, err = s.termination(ctx, card, reason, issuerEvent); err != nil {
			return false, err
		}
		err = s.Store.Terminate(ctx, t)
		return errors.Is(err, ErrChanged), err
	})
	if err != nil {
		return Card{}, Transaction{}, err
	}
	slog.InfoContext(ctx, "card terminated", "card_id", card.ID, "refund", card.Available(), "held", card.Held,
		"by_issuer", issuerEvent != "")
	s.publish(ctx, t.Events)
	card.Status, card.Balance, card.UpdatedAt = Terminated, card.Held, t.Now
	return card, t.Tx, nil
}

// termination returns the termination of card as read: what no hold keeps
// refunded at once.
func (s *Service) termination(ctx context.Context, card Card, reason, issuerEvent string) (Termination, error) {
	now := s.now()
	refund := card.Available()
	tx := s.newTx(card, TxTermination, refund, 0, now)
	tx.Status, tx.CardDelta, tx.WalletDelta, tx.CompletedAt = TxSuccess, -refund, refund, &now
	tx.Description = reason
	t := Termination{Card: card, EventID: issuerEvent, Tx: tx, Now: now}
	if refund > 0 {
		w, err := s.Wallets.USDWallet(ctx, card.CompanyID)
		if err != nil {
			return Termination{}, fmt.Errorf("cards: read the USD wallet to refund %s: %w", card.ID, err)
		}
		tx.WalletID = w.ID
		t.Tx = tx
		t.Wallet, t.Entries = credit(tx, wallets.TypeRefund, refund, now)
	}
	// refundProcessed: nothing is left to refund once this is written;
	// else the open holds' money follows as the sweeper releases them.
	var data events.Payload = events.CardTerminatedByCompanyData{
		CardID: card.ID, CardNumber: card.MaskedPAN(), Status: events.CardStatusTerminated, TerminatedAt: timestamp.Format(now),
		RefundAmount: money.JSON(refund, Currency), RefundProcessed: card.Held == 0, Reason: reason,
	}
	if issuerEvent != "" {
		data = events.CardTerminatedByProviderData{
			CardID: card.ID, Status: events.CardStatusTerminated, Reason: events.TerminationReasonProvider,
			PreviousBalance: money.JSON(card.Balance, Currency),
		}
	}
	for _, p := range []events.Payload{data, events.TransactionTerminatedData{CardTransaction: cardTxEvent(t.Tx)}} {
		ev, err := events.Build(card.CompanyID, p, now)
		if err != nil {
			return Termination{}, err
		}
		t.Events = append(t.Events, ev)
	}
	return t, nil
}
