package cards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"payments/pkg/contention"
	"payments/pkg/providers/issuer"
	"payments/pkg/wallets"
)

// This file finishes terminations. A termination (Terminate, or the
// issuer's) is one transaction whatever the card's history: the card
// TERMINATED, on which nothing is approved any more, keeps what its open
// holds keep. The sweeper then releases those holds, a page at a time, each
// a REVERSAL whose money goes to the USD wallet
// (transaction.reversal.completed), until the card keeps nothing; a hold
// the network settles meanwhile is settled instead, its rest to the
// wallet too (followRecord).

// holdsPage bounds the card transactions one read of a card's holds
// takes.
const holdsPage = 100

// releaseReserve is the time FinishTermination leaves before its
// context's deadline: it starts no release within it, so that its caller
// answers in time.
const releaseReserve = time.Second

// FinishTermination releases the open holds of terminated card id of the
// company, which Store.Terminating found, oldest first, until the card
// keeps nothing (Store.TerminationDone) or the context's deadline is
// within releaseReserve: the rest is left to the next call (the next
// sweep), which starts again from the card's first transaction. It
// returns how many holds it released. Each release is conditioned on the
// hold as read, so a settlement or a reversal of the network, or another
// sweep, written first leaves it alone.
func (s *Service) FinishTermination(ctx context.Context, companyID, id string) (released int, err error) {
	card, err := s.Store.Card(ctx, companyID, id)
	if err != nil {
		return 0, err
	}
	if card.Status != Terminated {
		return 0, fmt.Errorf("cards: finish the termination of card %s, which is %s", id, card.Status)
	}
	if card.Held > 0 {
		// Every release credits the USD wallet: read it once.
		w, err := s.Wallets.USDWallet(ctx, companyID)
		if err != nil {
			return 0, fmt.Errorf("cards: read the USD wallet to release the holds of card %s: %w", id, err)
		}
		run := *s
		run.Wallets = usdWallet{w}
		s = &run
	}
	after, pass := "", 0 // pass: the holds released since the pass began
	for card.Held > 0 {
		if late(ctx) {
			return released, nil
		}
		holds, next, err := s.Store.HoldsAfter(ctx, companyID, id, after, holdsPage)
		if err != nil {
			return released, err
		}
		for _, h := range holds {
			if late(ctx) {
				return released, nil
			}
			done, err := s.releaseHold(ctx, card, h)
			if err != nil {
				return released, err
			}
			if done {
				released++
				pass++
			}
		}
		if after = next; after != "" {
			continue
		}
		// Every transaction of the card read: its record says what is
		// left (a hold the index did not show yet).
		if card, err = s.Store.Card(ctx, companyID, id); err != nil {
			return released, err
		}
		if card.Held > 0 && pass == 0 {
			slog.WarnContext(ctx, "a terminated card holds money no open hold was found for yet", "card_id", id, "held", card.Held)
			return released, nil
		}
		pass = 0
	}
	if err := s.Store.TerminationDone(ctx, companyID, id); err != nil {
		return released, fmt.Errorf("cards: finish the termination of card %s: %w", id, err)
	}
	slog.InfoContext(ctx, "card termination finished: no hold left", "card_id", id, "released", released)
	return released, nil
}

// usdWallet is the USD wallet of a company, read once.
type usdWallet struct{ w wallets.Wallet }

// USDWallet returns the wallet read.
func (u usdWallet) USDWallet(context.Context, string) (wallets.Wallet, error) { return u.w, nil }

// late reports whether ctx's deadline is within releaseReserve.
func late(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && time.Until(dl) < releaseReserve
}

// releaseHold reverses authorization h of terminated card, its money to
// the USD wallet, as the network would have reversed it before the card
// closed; released is false when the hold was released meanwhile (settled
// or reversed by the network, or by another sweep).
func (s *Service) releaseHold(ctx context.Context, card Card, h Transaction) (released bool, err error) {
	n := issuer.Notification{Type: issuer.NotifyReversal, Transaction: &issuer.NetworkTransaction{}}
	tries := 0
	_, err = contention.Retry.Do(ctx, func(ctx context.Context) (bool, error) {
		if tries++; tries > 1 {
			// The page read lags, or a write came first: read it again.
			var err error
			if h, err = s.Store.Transaction(ctx, card.CompanyID, h.ID); err != nil {
				return false, err
			}
		}
		if h.Hold == 0 {
			return false, nil
		}
		rec, err := s.reverseRecord(ctx, card, h, n)
		if err != nil {
			return false, err
		}
		if err = s.record(ctx, rec); err != nil {
			return errors.Is(err, ErrChanged) || errors.Is(err, ErrCardRefused),
				fmt.Errorf("cards: release hold %s of terminated card %s: %w", h.ID, card.ID, err)
		}
		released = true
		return false, nil
	})
	return released, err
}
