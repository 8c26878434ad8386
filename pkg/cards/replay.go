package cards

import (
	"context"
	"encoding/json"
	"fmt"

	"payments/pkg/idempotency"
)

// This file answers the retry of a request with an Idempotency-Key whose
// first run committed its effect but stored no answer (a crash, a time-out
// between the two): from what the effect names, as it stands now, instead
// of moving money again (docs/idempotency.md).

// moveReceipt is what a funding or a withdrawal records with its effect:
// the card's balance when it was accepted, which its answer reports and no
// record keeps.
type moveReceipt struct {
	BalanceBefore int64 `json:"card_balance_before"`
}

func (r moveReceipt) encode() []byte {
	b, _ := json.Marshal(r) // an int64 field cannot fail
	return b
}

// moveResult is the answer of a funding or a withdrawal settled as tx,
// from the card's balance before it: a FAILED one was reversed,
// ErrIssuerDeclined.
func moveResult(tx Transaction, before int64) (MoveResult, error) {
	if tx.Status == TxFailed {
		return MoveResult{}, fmt.Errorf("%w: %s (transaction %s, reversed)", ErrIssuerDeclined, tx.Error, tx.ID)
	}
	return MoveResult{Tx: tx, BalanceBefore: before, BalanceAfter: before + tx.CardDelta}, nil
}

// replayMove answers the replay of a funding or a withdrawal whose first
// run committed transaction e.ID: as that run would have, from the
// transaction as it stands; one still PROCESSING is carried on (the issuer
// asked again, idempotently on the transaction, and the answer settled),
// as the first run would have.
func (s *Service) replayMove(ctx context.Context, companyID string, e idempotency.Effect) (MoveResult, error) {
	var r moveReceipt
	if err := json.Unmarshal(e.Receipt, &r); err != nil {
		return MoveResult{}, fmt.Errorf("cards: the receipt of %s: %w", e.ID, err)
	}
	tx, err := s.Store.Transaction(ctx, companyID, e.ID)
	if err != nil {
		return MoveResult{}, fmt.Errorf("cards: replay %s: %w", e.ID, err)
	}
	if tx.Status != TxProcessing {
		return moveResult(tx, r.BalanceBefore)
	}
	card, err := s.Store.Card(ctx, companyID, tx.CardID)
	if err != nil {
		return MoveResult{}, fmt.Errorf("cards: replay %s: %w", e.ID, err)
	}
	return s.finishMove(ctx, card, tx, r.BalanceBefore)
}

// replayIssue answers the replay of an issuance whose first run committed
// card e.ID: the card as it stands (a PENDING one is finished by the
// sweeper).
func (s *Service) replayIssue(ctx context.Context, companyID string, e idempotency.Effect) (Card, error) {
	c, err := s.Store.Card(ctx, companyID, e.ID)
	if err != nil {
		return Card{}, fmt.Errorf("cards: replay %s: %w", e.ID, err)
	}
	return c, nil
}

// replayTermination answers the replay of a termination whose first run
// committed transaction e.ID: the card as it stands and that transaction.
func (s *Service) replayTermination(ctx context.Context, companyID string, e idempotency.Effect) (Card, Transaction, error) {
	tx, err := s.Store.Transaction(ctx, companyID, e.ID)
	if err != nil {
		return Card{}, Transaction{}, fmt.Errorf("cards: replay %s: %w", e.ID, err)
	}
	c, err := s.Store.Card(ctx, companyID, tx.CardID)
	if err != nil {
		return Card{}, Transaction{}, fmt.Errorf("cards: replay %s: %w", e.ID, err)
	}
	return c, tx, nil
}
