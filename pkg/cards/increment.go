package cards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"payments/pkg/contention"
	"payments/pkg/providers/issuer"
)

// increment follows an increment the issuer approved on an authorization
// already approved (a hotel's or a fuel pump's amount raised: the advice
// of an approval naming the authorization it adds to): the authorization's
// amount and its hold grow by the increment, whatever the card has
// available (the issuer's word: what the card cannot pay at settlement
// the wallet pays, then a debt). It is claimed by the increment's own id,
// so that it is applied once whatever reports it. An authorization whose
// hold we released already (our hold expiry) holds nothing again: the
// increment is logged at error level and the reconciliation reports what
// the issuer still holds of it.
func (s *Service) increment(ctx context.Context, card Card, n issuer.Notification) error {
	t := *n.Transaction
	lost := fmt.Errorf("increment %s: %w", t.ID, ErrChanged)
	_, err := contention.Retry.Do(ctx, func(ctx context.Context) (bool, error) {
		auth, err := s.Store.NetworkTransaction(ctx, card.CompanyID, t.AuthorizationID)
		switch {
		case errors.Is(err, ErrTransactionNotFound):
			return false, fmt.Errorf("increment %s of %s: %w", t.ID, t.AuthorizationID, errNotYet)
		case err != nil:
			return false, err
		case auth.CardID != card.ID || auth.Type != TxAuthorization:
			return false, fmt.Errorf("increment %s of %s: %w", t.ID, t.AuthorizationID, ErrTransactionNotFound)
		}
		after := auth
		after.Amount += t.Amount
		rec := Record{EventID: t.ID, Made: auth.ID, Card: card, Forced: true, Original: &auth, OriginalAfter: &after, Now: s.now()}
		if auth.Hold > 0 {
			after.Hold += t.Amount
			rec.HeldDelta = t.Amount
		} else {
			slog.ErrorContext(ctx, "an increment on an authorization whose hold we released: nothing held, for the reconciliation",
				"transaction_id", auth.ID, "card_id", card.ID, "increment_id", t.ID, "amount", t.Amount)
		}
		err = s.record(ctx, rec)
		switch {
		case err == nil, errors.Is(err, ErrEventApplied):
			return false, nil
		case !errors.Is(err, ErrChanged):
			return false, err
		}
		if card, err = s.Store.Card(ctx, card.CompanyID, card.ID); err != nil {
			return false, err
		}
		return true, lost
	})
	return err
}
