package wallets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"payments/pkg/events"
	"payments/pkg/fees"
	"payments/pkg/field"
	"payments/pkg/idempotency"
	"payments/pkg/ids"
	"payments/pkg/money"
	"payments/pkg/timestamp"
)

// FeeQuoter prices an operation by the company's fee schedule
// (fees.Service).
type FeeQuoter interface {
	Quote(ctx context.Context, companyID, typ, operator, country, currency string, amount int64) (fees.Quote, error)
}

// Publisher publishes events right after the commit of the change they
// report (outbox.Publisher); what it cannot publish the sweeper does.
type Publisher interface {
	Publish(ctx context.Context, evs ...events.Event) error
}

// Move is one atomic change of one wallet that writes several new ledger
// entries and an event: an internal transfer. The store sets each entry's
// BalanceBefore and BalanceAfter, in order, from the wallet as read just
// before the write.
type Move struct {
	// ID names the move (a transfer's id): the effect a request holding an
	// Idempotency-Key records with it.
	ID        string
	CompanyID string
	WalletID  string
	// Adjust is the change of the wallet: the sum of the entries' Delta
	// on each sub-balance.
	Adjust  Adjustment
	Entries []Transaction
	Event   events.Event
	// Now is written as the wallet's updated_at.
	Now time.Time
	// Receipt, when set, encodes the answer of the move from the wallet
	// after it, recorded with the effect for a retry to answer from.
	Receipt func(after Wallet) ([]byte, error)
}

// MoveStore is the persistence of moves.
type MoveStore interface {
	// ApplyMove writes m in one transaction: the wallet adjusted, on the
	// condition that it is active and that no balance goes below 0
	// (payout_available covers what leaves the payout balance), m's
	// entries and m's event. It returns the wallet after it: ErrNotFound,
	// ErrInactive or ErrInsufficientBalance when the condition fails. A
	// credit to the payout balance of a USD wallet first pays the
	// company's pending debts, in the same transaction.
	ApplyMove(ctx context.Context, m Move) (Wallet, error)
}

// TransferInput is an internal transfer between the two sub-balances of
// one wallet: the body of POST /wallets/{id}/transfer-internal.
type TransferInput struct {
	// Amount is the amount's JSON value as received: a number of major
	// units, at least 1 (money.ParseAmount).
	Amount string
	// From is the sub-balance debited, payin when empty; To the one
	// credited, payout when empty.
	From, To SubBalance
}

// Transfer is a completed internal transfer.
type Transfer struct {
	// ID is the transfer's: the reference of its ledger entries.
	ID       string
	WalletID string
	// Amount is what To received; From paid Amount + Fee.
	Amount, Fee int64
	From, To    SubBalance
	// Wallet is the wallet after the transfer (and after the debts it
	// paid).
	Wallet Wallet
}

// TransferInternal moves in.Amount from one sub-balance of wallet walletID
// of the company to the other, in one transaction: the source pays the
// amount and the TRANSFER fee of the company's schedule, the destination
// receives the amount. Ledger entries: a TRANSFER debiting the source, a
// FEE when the fee is not 0, a TRANSFER crediting the destination, all
// with the transfer id as their reference; and the event
// wallet.transfer.completed. Money on the payout balance reserved by
// payouts in flight does not move: a payout source is limited to
// payout_available.
func (s *Service) TransferInternal(ctx context.Context, companyID, walletID string, in TransferInput) (Transfer, error) {
	if e, ok := idempotency.Replaying(ctx); ok {
		return idempotency.DecodeReceipt[Transfer](e)
	}
	if in.From == "" {
		in.From = Payin
	}
	if in.To == "" {
		in.To = Payout
	}
	for _, f := range []struct {
		name string
		b    SubBalance
	}{{"from", in.From}, {"to", in.To}} {
		if f.b != Payin && f.b != Payout {
			return Transfer{}, field.Invalid(f.name, `must be "payin" or "payout"`)
		}
	}
	if in.From == in.To {
		return Transfer{}, field.Invalid("to", "must be the other sub-balance than from")
	}
	if in.Amount == "" {
		return Transfer{}, field.Invalid("amount", "is required")
	}
	w, err := s.Get(ctx, companyID, walletID)
	if err != nil {
		return Transfer{}, err
	}
	amount, err := money.ParseAmount(json.RawMessage(in.Amount), w.Currency)
	if err != nil {
		return Transfer{}, field.Invalid("amount", err.Error())
	}
	if !w.IsActive {
		return Transfer{}, ErrInactive
	}
	if s.Fees == nil {
		return Transfer{}, errors.New("wallets: transfer: no fee schedule to price it")
	}
	q, err := s.Fees.Quote(ctx, companyID, fees.TypeTransfer, "", w.CountryISOCode, w.Currency, amount)
	switch {
	case errors.Is(err, fees.ErrNoRule):
		return Transfer{}, err
	case err != nil:
		return Transfer{}, fmt.Errorf("wallets: price transfer: %w", err)
	}
	fee := q.Fee

	now := s.now()
	t := Transfer{ID: ids.NewV7(now), WalletID: walletID, Amount: amount, Fee: fee, From: in.From, To: in.To}
	entry := func(typ Type, b SubBalance, delta int64) Transaction {
		return Completed(ids.NewV7(now), w, typ, t.ID, b, delta, now)
	}
	debit, credit := entry(TypeTransfer, in.From, -amount), entry(TypeTransfer, in.To, amount)
	entries := []Transaction{debit}
	data := events.WalletTransferCompletedData{
		TransferID: t.ID, WalletID: walletID, Currency: w.Currency,
		Amount: money.JSON(amount, w.Currency), FeeAmount: money.JSON(fee, w.Currency),
		From: string(in.From), To: string(in.To),
		DebitTransactionID: debit.ID, CreditTransactionID: credit.ID, CompletedAt: timestamp.Format(now),
	}
	if fee > 0 {
		f := entry(TypeFee, in.From, -fee)
		entries = append(entries, f)
		data.FeeTransactionID = &f.ID
	}
	entries = append(entries, credit)
	ev, err := events.Build(companyID, data, now)
	if err != nil {
		return Transfer{}, err
	}
	adj := adjustment(in.From, -(amount + fee))
	adj.add(in.To, amount)
	t.Wallet, err = s.store.ApplyMove(ctx, Move{
		ID: t.ID, CompanyID: companyID, WalletID: walletID, Adjust: adj, Entries: entries, Event: ev, Now: now,
		Receipt: func(after Wallet) ([]byte, error) {
			done := t
			done.Wallet = after
			return idempotency.EncodeReceipt(done)
		},
	})
	switch {
	case errors.Is(err, ErrInsufficientBalance):
		return Transfer{}, ErrInsufficientWalletBalance
	case errors.Is(err, ErrInactive), errors.Is(err, ErrNotFound):
		return Transfer{}, err
	case err != nil:
		return Transfer{}, fmt.Errorf("wallets: transfer in %s: %w", walletID, err)
	}
	s.publish(ctx, ev)
	return t, nil
}

// adjustment returns the Adjustment that adds n to sub-balance b.
func adjustment(b SubBalance, n int64) Adjustment {
	var a Adjustment
	a.add(b, n)
	return a
}

// add adds n to sub-balance b of a.
func (a *Adjustment) add(b SubBalance, n int64) {
	if b == Payin {
		a.Payin += n
	} else {
		a.Payout += n
	}
}

// publish publishes evs after their commit; an error is logged, and the
// sweeper publishes what is left.
func (s *Service) publish(ctx context.Context, evs ...events.Event) {
	if s.Events == nil {
		return
	}
	if err := s.Events.Publish(ctx, evs...); err != nil {
		slog.WarnContext(ctx, "publish wallet events after commit; the sweeper will", "error", err)
	}
}
