package cards

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"payments/pkg/events"
	"payments/pkg/fees"
	"payments/pkg/ids"
	"payments/pkg/money"
	"payments/pkg/providers/issuer"
	"payments/pkg/wallets"
)

// AmountInput is the body of POST /cards/{id}/fund and
// POST /cards/{id}/withdraw.
type AmountInput struct {
	Amount json.RawMessage `json:"amount"`
}

// MoveResult is the card fund result of spec §2.8, also the answer of a
// withdrawal. Amounts are USD cents; Status is the card transaction's.
type MoveResult struct {
	Tx            Transaction
	BalanceBefore int64
	BalanceAfter  int64
}

// Fund moves in.Amount from the USD wallet onto an ACTIVE card of the
// company; the wallet pays the amount and the funding fee. The wallet is
// debited at once and the card credited when the issuer confirms, which it
// is asked at once: ErrIssuerUnavailable when it cannot answer (the funding
// stays PROCESSING and the sweeper finishes it; check the balance before
// retrying). An issuer that refuses reverses it: the wallet is refunded.
func (s *Service) Fund(ctx context.Context, companyID, cardID string, in AmountInput) (MoveResult, error) {
	card, amount, err := s.moveCheck(ctx, companyID, cardID, in, Active)
	if err != nil {
		return MoveResult{}, err
	}
	w, err := s.usdWallet(ctx, companyID)
	if err != nil {
		return MoveResult{}, err
	}
	fee, err := s.fee(ctx, companyID, fees.TypeCardFunding, amount)
	if err != nil {
		return MoveResult{}, err
	}
	if w.PayoutAvailable < amount+fee {
		return MoveResult{}, ErrInsufficientWallet
	}
	now := s.now()
	tx := s.newTx(card, TxFunding, amount, fee, now)
	tx.WalletID, tx.WalletDelta, tx.Description = w.ID, -amount, "Card funding"
	entries := []wallets.Transaction{entry(w, tx, wallets.TypeTransfer, -amount, ids.NewV7(now), now)}
	if fee > 0 {
		entries = append(entries, entry(w, tx, wallets.TypeFee, -fee, ids.NewV7(now), now))
	}
	ev, err := events.Build(companyID, events.CardFundData{
		TransactionID: tx.ID, CardID: card.ID, Amount: money.JSON(amount, Currency), Currency: Currency,
		FeeAmount: money.JSON(fee, Currency),
	}, now)
	if err != nil {
		return MoveResult{}, err
	}
	a := Accept{Card: card, From: []Status{Active}, Tx: tx, Wallet: wallets.Adjustment{Payout: -(amount + fee)},
		Entries: entries, Events: []events.Event{ev}, Now: now}
	if err := s.Store.Accept(ctx, a); err != nil {
		return MoveResult{}, err
	}
	s.publish(ctx, a.Events)
	return s.finishMove(ctx, card, tx)
}

// Withdraw moves in.Amount from an ACTIVE or FROZEN card of the company to
// the USD wallet; the card pays the amount and the withdrawal fee. The card
// is debited at once and the wallet credited when the issuer confirms; an
// issuer that refuses gives the card its money back (card.withdraw.failed).
func (s *Service) Withdraw(ctx context.Context, companyID, cardID string, in AmountInput) (MoveResult, error) {
	card, amount, err := s.moveCheck(ctx, companyID, cardID, in, Active, Frozen)
	if err != nil {
		return MoveResult{}, err
	}
	w, err := s.usdWallet(ctx, companyID)
	if err != nil {
		return MoveResult{}, err
	}
	fee, err := s.fee(ctx, companyID, fees.TypeCardWithdrawal, amount)
	if err != nil {
		return MoveResult{}, err
	}
	if card.Balance < amount+fee {
		return MoveResult{}, ErrInsufficientCard
	}
	now := s.now()
	tx := s.newTx(card, TxWithdrawal, amount, fee, now)
	tx.WalletID, tx.CardDelta, tx.Description = w.ID, -(amount + fee), "Card withdrawal"
	ev, err := events.Build(companyID, events.CardWithdrawData{
		TransactionID: tx.ID, CardID: card.ID, Amount: money.JSON(amount, Currency), Currency: Currency,
		FeeAmount: money.JSON(fee, Currency),
	}, now)
	if err != nil {
		return MoveResult{}, err
	}
	a := Accept{Card: card, From: []Status{Active, Frozen}, Tx: tx, Events: []events.Event{ev}, Now: now}
	if err := s.Store.Accept(ctx, a); err != nil {
		return MoveResult{}, err
	}
	s.publish(ctx, a.Events)
	return s.finishMove(ctx, card, tx)
}

// moveCheck reads the card and the amount of a funding or a withdrawal:
// the card must be in one of from (ErrTerminated for a terminated card,
// else ErrNotActive), the amount at least 1 USD.
func (s *Service) moveCheck(ctx context.Context, companyID, cardID string, in AmountInput, from ...Status) (Card, int64, error) {
	if s.Issuer == nil {
		return Card{}, 0, ErrNoIssuer
	}
	card, err := s.card(ctx, companyID, cardID)
	if err != nil {
		return Card{}, 0, err
	}
	amount, err := parseAmount(in.Amount)
	if err != nil {
		return Card{}, 0, err
	}
	if !slices.Contains(from, card.Status) {
		if card.Status == Terminated {
			return Card{}, 0, ErrTerminated
		}
		return Card{}, 0, ErrNotActive
	}
	return card, amount, nil
}

// newTx returns a new PROCESSING card transaction of card.
func (s *Service) newTx(card Card, typ TxType, amount, fee int64, now time.Time) Transaction {
	return Transaction{
		ID: ids.NewV7(now), CompanyID: card.CompanyID, CardID: card.ID, CustomerID: card.CustomerID,
		Type: typ, Status: TxProcessing, Amount: amount, Fee: fee, CreatedAt: now,
	}
}

// finishMove asks the issuer to carry out an accepted funding or withdrawal
// (idempotently, on our transaction id) and settles it. An issuer that
// cannot answer leaves it PROCESSING: ErrIssuerUnavailable.
func (s *Service) finishMove(ctx context.Context, card Card, tx Transaction) (MoveResult, error) {
	m := issuer.Movement{Reference: tx.ID, CardID: card.IssuerCardID, Amount: tx.Amount}
	var err error
	if tx.Type == TxFunding {
		_, err = s.Issuer.FundCard(ctx, m)
	} else {
		m.Amount += tx.Fee
		_, err = s.Issuer.WithdrawCard(ctx, m)
	}
	if err != nil && !definitive(err) {
		slog.WarnContext(ctx, "card movement not answered: it stays PROCESSING for the sweeper", "transaction_id", tx.ID, "error", err)
		return MoveResult{}, fmt.Errorf("%w: %w", ErrIssuerUnavailable, err)
	}
	if err == nil && tx.Type == TxFunding {
		// A card terminated while the issuer was funding it takes no more
		// money: the funding goes back to the wallet.
		now, rerr := s.Store.Card(ctx, card.CompanyID, card.ID)
		if rerr != nil {
			return MoveResult{}, fmt.Errorf("cards: read card %s to settle %s: %w", card.ID, tx.ID, rerr)
		}
		if now.Status == Terminated {
			slog.WarnContext(ctx, "funding confirmed after the card was terminated: refunded", "transaction_id", tx.ID)
			err = fmt.Errorf("%w: the card was terminated", issuer.ErrCardState)
		}
	}
	now := s.now()
	st := Settle{Tx: tx, Now: now}
	st.Tx.CompletedAt = &now
	var kind events.Payload
	switch {
	case err != nil && tx.Type == TxFunding:
		st.Tx.Status, st.Tx.WalletDelta, st.Tx.Error = TxFailed, 0, issuerReason(err)
		if st.Wallet, st.Entries, err = s.refund(ctx, card.CompanyID, tx, tx.Amount+tx.Fee, now); err != nil {
			return MoveResult{}, err
		}
	case err != nil: // a withdrawal the issuer refused: the card gets its money back
		st.Tx.Status, st.Tx.CardDelta, st.Tx.Error = TxFailed, 0, issuerReason(err)
		st.CardChange = tx.Amount + tx.Fee
		kind = events.CardWithdrawFailedData{TransactionID: tx.ID, CardID: card.ID, Amount: money.JSON(tx.Amount, Currency), Error: st.Tx.Error}
	case tx.Type == TxFunding:
		st.Tx.Status, st.Tx.CardDelta, st.CardChange = TxSuccess, tx.Amount, tx.Amount
		kind = events.TransactionFundingCompletedData{CardTransaction: cardTxEvent(st.Tx)}
	default:
		w, err := s.Wallets.USDWallet(ctx, card.CompanyID)
		if err != nil {
			return MoveResult{}, fmt.Errorf("cards: read the USD wallet to credit %s: %w", tx.ID, err)
		}
		st.Tx.Status, st.Tx.WalletDelta = TxSuccess, tx.Amount
		st.Wallet = wallets.Adjustment{Payout: tx.Amount}
		st.Entries = []wallets.Transaction{entry(w, tx, wallets.TypeTransfer, tx.Amount, ids.NewV7(now), now)}
		kind = events.TransactionWithdrawalCompletedData{CardTransaction: cardTxEvent(st.Tx)}
	}
	if kind != nil {
		ev, err := events.Build(card.CompanyID, kind, now)
		if err != nil {
			return MoveResult{}, err
		}
		st.Events = []events.Event{ev}
	}
	if err := s.Store.Settle(ctx, st); err != nil {
		if errors.Is(err, ErrChanged) { // settled by another run: answer what is stored
			stored, rerr := s.Store.Transaction(ctx, card.CompanyID, tx.ID)
			if rerr != nil {
				return MoveResult{}, rerr
			}
			st.Tx = stored
		} else {
			return MoveResult{}, fmt.Errorf("cards: settle %s: %w", tx.ID, err)
		}
	} else {
		s.publish(ctx, st.Events)
	}
	slog.InfoContext(ctx, "card movement settled", "transaction_id", tx.ID, "type", tx.Type, "status", st.Tx.Status)
	if st.Tx.Status == TxFailed {
		return MoveResult{}, fmt.Errorf("%w: %s (transaction %s, reversed)", ErrIssuerDeclined, st.Tx.Error, tx.ID)
	}
	before := card.Balance
	return MoveResult{Tx: st.Tx, BalanceBefore: before, BalanceAfter: before + st.Tx.CardDelta}, nil
}

// cardTxEvent is the common payload of the transaction.* events.
func cardTxEvent(tx Transaction) events.CardTransaction {
	return events.CardTransaction{
		TransactionID: tx.ID, CardID: tx.CardID, CustomerID: tx.CustomerID, Type: string(tx.Type),
		Status: string(tx.Status), Amount: money.JSON(tx.Amount, Currency), Currency: Currency,
		Description: tx.Description, CreatedAt: tx.CreatedAt,
	}
}
