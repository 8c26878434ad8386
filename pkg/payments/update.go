package payments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"payments/pkg/contention"
	"payments/pkg/providers/operator"
)

// Update is an operator's final answer about a payment, pushed by the
// operator (a verified callback) rather than asked for.
type Update struct {
	Kind    operator.Kind   `json:"kind"`
	State   operator.State  `json:"state"`
	OrderID string          `json:"order_id,omitempty"`
	Reason  string          `json:"reason,omitempty"`
	Raw     json.RawMessage `json:"raw,omitempty"`
}

// ErrUpdateNotFinal is an operator update whose state is not SUCCESS or
// FAILED: only final answers are pushed to the worker.
var ErrUpdateNotFinal = errors.New("payments: operator update is not final")

// QueueUpdate puts the operator's final answer res about the request of
// kind k, our payment transactionID of companyID, on the payouts queue for
// the worker to apply. Only a final answer (SUCCESS or FAILED) is queued;
// another is ErrUpdateNotFinal.
func QueueUpdate(ctx context.Context, jobs Jobs, companyID, transactionID string, k operator.Kind, res operator.Result) error {
	if !res.State.Final() {
		return fmt.Errorf("%w: %s of %s", ErrUpdateNotFinal, res.State, transactionID)
	}
	body, err := json.Marshal(Job{CompanyID: companyID, TransactionID: transactionID, Update: &Update{
		Kind: k, State: res.State, OrderID: res.OrderID, Reason: res.Reason, Raw: res.Raw,
	}})
	if err != nil {
		return fmt.Errorf("payments: encode update of %s: %w", transactionID, err)
	}
	if err := jobs.Send(ctx, body, 0); err != nil {
		return fmt.Errorf("payments: queue update of %s: %w", transactionID, err)
	}
	return nil
}

// applyUpdate applies the operator's final answer u to p, read for the
// message, unless p is final already (a poll, or another copy of the
// callback, applied it) or u is about a request of another kind than p's
// (logged and dropped: the callback does not match our payment). The
// answer takes the payment from PENDING or PROCESSING to its final status
// through a transition conditioned on the status read, so it is applied
// once; the messages of the payment's schedule are then stale and dropped.
// A payment that moved on between its read and the write (the worker took
// it from PENDING to PROCESSING meanwhile) is read again and the answer
// applied to it, under the one retry policy; a race lost for good leaves
// the message for SQS to deliver again.
func (s *Service) applyUpdate(ctx context.Context, p Payment, u Update) error {
	o, ok := outcomeOf(operator.Result{OrderID: u.OrderID, State: u.State, Reason: u.Reason, Raw: u.Raw})
	if !ok {
		return nil // ParseJob admits final states only
	}
	_, err := contention.Retry.Do(ctx, func(ctx context.Context) (bool, error) {
		if p.Status.Terminal() {
			return false, nil
		}
		if u.Kind != OperatorKind(p.Type) {
			slog.ErrorContext(ctx, "drop operator update of another kind than the payment",
				"company_id", p.CompanyID, "transaction_id", p.ID, "type", p.Type, "update_kind", u.Kind)
			return false, nil
		}
		slog.InfoContext(ctx, "operator update received", "company_id", p.CompanyID, "transaction_id", p.ID, "state", u.State)
		err := s.settle(ctx, p, o)
		if !errors.Is(err, ErrStatusChanged) {
			return false, err
		}
		fresh, rerr := s.store.GetPayment(ctx, p.CompanyID, p.ID)
		if rerr != nil {
			return false, fmt.Errorf("payments: read %s again: %w", p.ID, rerr)
		}
		p = fresh
		return true, err
	})
	if err != nil {
		return fmt.Errorf("payments: apply the operator's update of %s: %w", p.ID, err)
	}
	return nil
}
