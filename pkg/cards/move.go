package cards

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"payments/pkg/contention"
	"payments/pkg/events"
	"payments/pkg/fees"
	"payments/pkg/idempotency"
	"payments/pkg/ids"
	"payments/pkg/money"
	"payments/pkg/providers/issuer"
	"payments/pkg/timestamp"
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
// card.fund, or card.fund.failed, is sent when the issuer has answered
// (moveSettlement).
func (s *Service) Fund(ctx context.Context, companyID, cardID string, in AmountInput) (MoveResult, error) {
	if e, ok := idempotency.Replaying(ctx); ok {
		return s.replayMove(ctx, companyID, e)
	}
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
		return MoveResult{}, wallets.ErrInsufficientWalletBalance
	}
	now := s.now()
	tx := s.newTx(card, TxFunding, amount, fee, now)
	tx.WalletID, tx.WalletDelta, tx.Description = w.ID, -amount, "Card funding"
	entries := []wallets.Transaction{entry(tx, wallets.TypeTransfer, -amount, ids.NewV7(now), now)}
	if fee > 0 {
		entries = append(entries, entry(tx, wallets.TypeFee, -fee, ids.NewV7(now), now))
	}
	a := Accept{Card: card, From: []Status{Active}, Tx: tx, Wallet: wallets.Adjustment{Payout: -(amount + fee)},
		Entries: entries, Now: now, Receipt: moveReceipt{card.Balance}.encode()}
	if err := s.Store.Accept(ctx, a); err != nil {
		return MoveResult{}, err
	}
	return s.finishMove(ctx, card, tx, card.Balance)
}

// Withdraw moves in.Amount from an ACTIVE or FROZEN card of the company to
// the USD wallet; the card pays the amount and the withdrawal fee. The card
// is debited at once and the wallet credited when the issuer confirms; an
// issuer that refuses gives the card its money back (card.withdraw.failed).
func (s *Service) Withdraw(ctx context.Context, companyID, cardID string, in AmountInput) (MoveResult, error) {
	if e, ok := idempotency.Replaying(ctx); ok {
		return s.replayMove(ctx, companyID, e)
	}
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
	if card.Available() < amount+fee {
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
	a := Accept{Card: card, From: []Status{Active, Frozen}, Tx: tx, Events: []events.Event{ev}, Now: now,
		Receipt: moveReceipt{card.Balance}.encode()}
	if err := s.Store.Accept(ctx, a); err != nil {
		return MoveResult{}, err
	}
	s.publish(ctx, a.Events)
	return s.finishMove(ctx, card, tx, card.Balance)
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
// cannot answer, or a settlement that cannot be written (in time: the
// request's work ends before its invocation, package deadline), leaves it
// PROCESSING for the sweeper: ErrIssuerUnavailable, with the result as it
// stands, so that the answer tells what was committed. A refusal is
// reversed: ErrIssuerDeclined (declined). before is the card's balance
// when the movement was accepted, which the result reports.
func (s *Service) finishMove(ctx context.Context, card Card, tx Transaction, before int64) (MoveResult, error) {
	m := issuer.Movement{Reference: tx.ID, CardID: card.IssuerCardID, Amount: tx.Amount}
	var refused error
	if tx.Type == TxFunding {
		_, refused = s.Issuer.FundCard(ctx, m)
	} else {
		m.Amount += tx.Fee
		_, refused = s.Issuer.WithdrawCard(ctx, m)
	}
	open := MoveResult{Tx: tx, BalanceBefore: before, BalanceAfter: before + tx.CardDelta}
	if refused != nil && !definitive(refused) {
		slog.WarnContext(ctx, "card movement not answered: it stays PROCESSING for the sweeper", "transaction_id", tx.ID, "error", refused)
		return open, fmt.Errorf("%w: %w", ErrIssuerUnavailable, refused)
	}
	var st Settle
	_, err := contention.Retry.Do(ctx, func(ctx context.Context) (bool, error) {
		// The card as it is now: a card terminated since the acceptance
		// takes no money back; it goes to the wallet.
		now, err := s.Store.Card(ctx, card.CompanyID, card.ID)
		if err != nil {
			return false, fmt.Errorf("%w: read card %s to settle %s: %w", ErrIssuerUnavailable, card.ID, tx.ID, err)
		}
		if st, err = s.moveSettlement(tx, now.Status.Live(), refused); err != nil {
			return false, err
		}
		err = s.Store.Settle(ctx, st)
		if err == nil {
			s.publish(ctx, st.Events)
			return false, nil
		}
		// Until it is written, whether the issuer moved the money is
		// known but not recorded: the sweeper will record it.
		unwritten := fmt.Errorf("%w: settle %s: %w", ErrIssuerUnavailable, tx.ID, err)
		if !errors.Is(err, ErrChanged) {
			return false, unwritten
		}
		stored, rerr := s.Store.Transaction(ctx, card.CompanyID, tx.ID)
		if rerr != nil {
			return false, fmt.Errorf("%w: read %s: %w", ErrIssuerUnavailable, tx.ID, rerr)
		}
		if stored.Status != TxProcessing { // settled by another run
			st.Tx = stored
			return false, nil
		}
		return true, unwritten
	})
	if err != nil && !errors.Is(err, ErrIssuerUnavailable) && !errors.Is(err, ErrIssuerDeclined) {
		// The wait between tries outlived the request's work.
		err = fmt.Errorf("%w: settle %s: %w", ErrIssuerUnavailable, tx.ID, err)
	}
	if errors.Is(err, ErrIssuerUnavailable) {
		slog.WarnContext(ctx, "card movement not settled: it stays PROCESSING for the sweeper", "transaction_id", tx.ID, "error", err)
		return open, err
	}
	if err != nil {
		return MoveResult{}, err
	}
	slog.InfoContext(ctx, "card movement settled", "transaction_id", tx.ID, "type", tx.Type, "status", st.Tx.Status)
	return moveResult(st.Tx, before)
}

// moveSettlement returns the settlement of open funding or withdrawal tx,
// given whether its card is still live and what the issuer answered
// (refused is nil when it carried the movement out), with its events:
//
//   - a funding carried out on a live card credits the card (card.fund,
//     transaction.funding.completed);
//   - a funding refused, or for a card terminated since, refunds the wallet
//     (the amount and the fee; card.fund.failed);
//   - a withdrawal carried out credits the wallet
//     (transaction.withdrawal.completed);
//   - a withdrawal refused gives the card its money back or, for a card
//     terminated since, refunds it to the wallet (card.withdraw.failed).
func (s *Service) moveSettlement(tx Transaction, live bool, refused error) (Settle, error) {
	now := s.now()
	st := Settle{Tx: tx, Now: now}
	st.Tx.CompletedAt = &now
	if refused == nil && tx.Type == TxFunding && !live {
		refused = fmt.Errorf("%w: the card was terminated", issuer.ErrCardState)
	}
	var payloads []events.Payload
	switch {
	case refused != nil && tx.Type == TxFunding:
		st.Tx.Status, st.Tx.WalletDelta, st.Tx.Error = TxFailed, 0, issuerReason(refused)
		st.Wallet, st.Entries = credit(tx, wallets.TypeRefund, tx.Amount+tx.Fee, now)
		payloads = append(payloads, events.CardFundFailedData{TransactionID: tx.ID, CardID: tx.CardID, Amount: money.JSON(tx.Amount, Currency), Error: st.Tx.Error})
	case refused != nil:
		st.Tx.Status, st.Tx.Error = TxFailed, issuerReason(refused)
		if live {
			st.Tx.CardDelta, st.CardChange = 0, tx.Amount+tx.Fee
		} else {
			st.Tx.WalletDelta = tx.Amount + tx.Fee
			st.Wallet, st.Entries = credit(tx, wallets.TypeRefund, tx.Amount+tx.Fee, now)
		}
		payloads = append(payloads, events.CardWithdrawFailedData{TransactionID: tx.ID, CardID: tx.CardID, Amount: money.JSON(tx.Amount, Currency), Error: st.Tx.Error})
	case tx.Type == TxFunding:
		st.Tx.Status, st.Tx.CardDelta, st.CardChange = TxSuccess, tx.Amount, tx.Amount
		payloads = append(payloads, events.CardFundData{
			TransactionID: tx.ID, CardID: tx.CardID, Amount: money.JSON(tx.Amount, Currency), Currency: Currency,
			FeeAmount: money.JSON(tx.Fee, Currency),
		}, events.TransactionFundingCompletedData{CardTransaction: cardTxEvent(st.Tx)})
	default:
		st.Tx.Status, st.Tx.WalletDelta = TxSuccess, tx.Amount
		st.Wallet, st.Entries = credit(tx, wallets.TypeTransfer, tx.Amount, now)
		payloads = append(payloads, events.TransactionWithdrawalCompletedData{CardTransaction: cardTxEvent(st.Tx)})
	}
	for _, p := range payloads {
		ev, err := events.Build(tx.CompanyID, p, now)
		if err != nil {
			return Settle{}, err
		}
		st.Events = append(st.Events, ev)
	}
	return st, nil
}

// cardTxEvent is the common payload of the transaction.* events.
func cardTxEvent(tx Transaction) events.CardTransaction {
	return events.CardTransaction{
		TransactionID: tx.ID, CardID: tx.CardID, CustomerID: tx.CustomerID, Type: string(tx.Type),
		Status: string(tx.Status), Amount: money.JSON(tx.Amount, Currency), Currency: Currency,
		Description: tx.Description, CreatedAt: timestamp.Format(tx.CreatedAt),
	}
}
