package cards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"payments/pkg/contention"
	"payments/pkg/providers/issuer"
)

// DefaultHoldExpiry is how long a hold stays open when neither settled nor
// reversed before the sweeper releases it (CARD_HOLD_EXPIRY_SECONDS): 7
// days.
const DefaultHoldExpiry = 7 * 24 * time.Hour

// expiryClaim prefixes the claim of a hold's expiry, written as an issuer
// event's is (ISSUEREVENT#expiry#<authorization id>): it makes the expiry
// once, whichever sweeps race, and names what it moved on the card, which
// the issuer is then told (its posting's reference).
const expiryClaim = "expiry#"

// ExpireHold releases the hold of authorization h, found open by the
// sweeper after its expiry, with a REVERSAL card transaction and
// transaction.reversal.completed (reason "expired"), in one conditional
// write: the authorization's hold, settled and refunded amounts still as
// read, the expiry claimed once. A hold settled or reversed meanwhile (by
// the network, a termination or another sweep) is left as it is:
// expired is false. Once the hold is released the issuer is told, as
// after a notification; until it is, the authorization stays in the open
// hold index, so that a sweep that could not tell it is followed by one
// that does.
func (s *Service) ExpireHold(ctx context.Context, h Transaction) (expired bool, err error) {
	claim := expiryClaim + h.ID
	n := issuer.Notification{ID: claim, Type: issuer.NotifyReversal, Reason: issuer.ReleaseExpired,
		Transaction: &issuer.NetworkTransaction{}}
	_, err = contention.Retry.Do(ctx, func(ctx context.Context) (bool, error) {
		// The index lags: read the hold again, strongly consistent.
		if h, err = s.Store.Transaction(ctx, h.CompanyID, h.ID); err != nil {
			return false, err
		}
		if h.Type != TxAuthorization || h.Hold == 0 {
			return false, nil // released meanwhile, or by an earlier sweep
		}
		card, err := s.Store.Card(ctx, h.CompanyID, h.CardID)
		if err != nil {
			return false, err
		}
		rec, err := s.reverseRecord(ctx, card, h, n)
		if err != nil {
			return false, err
		}
		rec.Untold = true
		switch err = s.record(ctx, rec); {
		case err == nil:
			expired = true
			return false, nil
		case errors.Is(err, ErrEventApplied):
			return false, nil // another sweep expired it
		case errors.Is(err, ErrChanged) || errors.Is(err, ErrCardRefused):
			return true, fmt.Errorf("cards: expire hold %s of card %s: %w", h.ID, h.CardID, err)
		}
		return false, fmt.Errorf("cards: expire hold %s of card %s: %w", h.ID, h.CardID, err)
	})
	if err != nil {
		return expired, err
	}
	if expired {
		slog.InfoContext(ctx, "card hold expired", "transaction_id", h.ID, "card_id", h.CardID)
	}
	return expired, s.told(ctx, h, claim)
}

// told tells the issuer of the expiry of authorization h's hold, claimed
// by claim, if it expired (else the network's or a termination's write
// released it, and took it out of the index), then takes h out of the
// open hold index.
func (s *Service) told(ctx context.Context, h Transaction, claim string) error {
	if _, found, err := s.Store.Outcome(ctx, h.CompanyID, claim); err != nil || !found {
		return err
	}
	card, err := s.Store.Card(ctx, h.CompanyID, h.CardID)
	if err != nil {
		return err
	}
	if err := s.tellIssuer(ctx, card, issuer.Notification{ID: claim, Type: issuer.NotifyReversal}); err != nil {
		return err
	}
	return s.Store.HoldTold(ctx, h.CompanyID, h.ID)
}
