package payments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"payments/pkg/events"
	"payments/pkg/ids"
	"payments/pkg/money"
	"payments/pkg/providers/operator"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// outcome is a final answer about a payment: the operator's, or the
// operator console's (resolution set).
type outcome struct {
	status     Status
	reason     string
	orderID    string
	raw        json.RawMessage
	resolution *Resolution
}

// outcomeOf returns the final answer in res, if res is final.
func outcomeOf(res operator.Result) (outcome, bool) {
	switch res.State {
	case operator.Succeeded:
		return outcome{status: StatusSuccess, orderID: res.OrderID, raw: res.Raw}, true
	case operator.Failed:
		reason := res.Reason
		if reason == "" {
			reason = "operator rejected the payment"
		}
		return outcome{status: StatusFailed, reason: reason, orderID: res.OrderID, raw: res.Raw}, true
	}
	return outcome{}, false
}

// finish applies a final outcome to p through a transition conditioned on
// p's status: exactly once, whoever calls it and however often. A payment
// that moved on means another delivery finished it, which is success.
func (s *Service) finish(ctx context.Context, p Payment, o outcome) error {
	if err := s.settle(ctx, p, o); err != nil && !errors.Is(err, ErrStatusChanged) {
		return err
	}
	return nil
}

// settle is finish, but a payment that moved on since p was read is
// ErrStatusChanged: its caller, which may have read p before the worker
// moved it from PENDING to PROCESSING, reads it again (applyUpdate).
func (s *Service) settle(ctx context.Context, p Payment, o outcome) error {
	t, err := s.transition(p, o)
	if err != nil {
		return err
	}
	switch err := s.store.ApplyTransition(ctx, t); {
	case errors.Is(err, ErrStatusChanged):
		return err
	case err != nil:
		return fmt.Errorf("payments: finish %s as %s: %w", p.ID, o.status, err)
	}
	slog.InfoContext(ctx, "payment finished", "company_id", p.CompanyID, "transaction_id", p.ID,
		"type", p.Type, "status", o.status, "error_message", t.Payment.ErrorMessage, "resolved", o.resolution != nil)
	countFinal(ctx, t.Payment)
	s.publish(ctx, t.Event)
	if p.BatchID != "" && s.batches != nil {
		s.batches.ItemFinished(ctx, p.CompanyID, p.BatchID)
	}
	return nil
}

// transition builds the final transition of p with outcome o:
//
//   - payout SUCCESS: payout_balance and payout_reserved drop by the
//     total; the reservation entry becomes SUCCESS with delta −total and
//     the balances before and after;
//   - payout FAILED: payout_reserved drops by the total (the money is
//     available again); the reservation entry becomes FAILED; a REFUND
//     entry (delta 0: the balance never moved) records the release;
//   - collection SUCCESS: payin_balance grows by amount − fee, with a
//     DEPOSIT entry;
//   - collection FAILED: the payment alone.
//
// An item of a bulk batch has no reservation entry of its own: its total
// is drawn out of the batch's (Transition.Draw), and it gets a WITHDRAW
// entry on SUCCESS, the REFUND entry on FAILED.
//
// The payment leaves the worker's schedule and the reconciliation list.
func (s *Service) transition(p Payment, o outcome) (Transition, error) {
	now := s.now()
	next := p
	next.Status = o.status
	next.UpdatedAt = now
	next.CompletedAt = &now
	next.NextPollAt = time.Time{}
	next.ReconciliationRequired = false
	next.Resolution = o.resolution
	if o.orderID != "" {
		next.OrderID = o.orderID
	}
	if o.raw != nil {
		next.Upstream = upstream(o.raw)
	}
	if o.status == StatusFailed {
		next.ErrorMessage = o.reason
	}
	t := Transition{From: p.Status, Flagged: o.resolution != nil, Payment: next, Now: now}
	var err error
	if t.Event, err = statusEvent(next, p.Status); err != nil {
		return Transition{}, err
	}
	if p.Type == TypeCollection && o.status == StatusFailed {
		return t, nil
	}
	// entry is the payment's completed ledger entry on its wallet.
	entry := func(typ wallets.Type, b wallets.SubBalance, delta, net int64) wallets.Transaction {
		w := wallets.Wallet{ID: p.WalletID, CompanyID: p.CompanyID, Currency: p.Currency}
		e := wallets.Completed(ids.NewV7(now), w, typ, p.ExternalID, b, delta, now)
		e.Amount, e.AmountWithFee, e.FeeAmount, e.NetAmount = p.Amount, p.Total(), p.Fee, net
		e.Operator, e.PhoneNumber, e.OrderID, e.PaymentID = p.Operator, p.PhoneNumber, next.OrderID, p.ID
		return e
	}
	total := p.Total()
	switch {
	case p.Type == TypeCollection: // SUCCESS
		net := p.Net()
		t.Adjust = wallets.Adjustment{Payin: net}
		t.NewEntries = []wallets.Transaction{entry(wallets.TypeDeposit, wallets.Payin, net, net)}
	case p.BatchEntryID != "" && o.status == StatusSuccess: // bulk item
		t.Adjust = wallets.Adjustment{Payout: -total, Reserved: -total}
		t.Draw = &wallets.EntryDraw{ID: p.BatchEntryID, Amount: total}
		t.NewEntries = []wallets.Transaction{entry(wallets.TypeWithdraw, wallets.Payout, -total, p.Amount)}
	case p.BatchEntryID != "": // bulk item FAILED
		t.Adjust = wallets.Adjustment{Reserved: -total}
		t.Draw = &wallets.EntryDraw{ID: p.BatchEntryID, Amount: total}
		t.NewEntries = []wallets.Transaction{entry(wallets.TypeRefund, wallets.Payout, 0, p.Amount)}
	case o.status == StatusSuccess: // payout
		t.Adjust = wallets.Adjustment{Payout: -total, Reserved: -total}
		t.Entry = &EntryChange{
			ID: p.EntryID, From: wallets.Status(p.Status), To: wallets.StatusSuccess,
			Delta: -total, Held: total, OrderID: next.OrderID, CompletedAt: &now,
		}
	default: // payout FAILED
		t.Adjust = wallets.Adjustment{Reserved: -total}
		t.Entry = &EntryChange{
			ID: p.EntryID, From: wallets.Status(p.Status), To: wallets.StatusFailed,
			Held: total, OrderID: next.OrderID, CompletedAt: &now,
		}
		t.NewEntries = []wallets.Transaction{entry(wallets.TypeRefund, wallets.Payout, 0, p.Amount)}
	}
	return t, nil
}

// statusEvent builds the status-update event of p, now in its status, that
// was in prev ("" for a payout's acceptance).
func statusEvent(p Payment, prev Status) (events.Event, error) {
	kind := events.PayoutStatusUpdated
	if p.Type == TypeCollection {
		kind = events.CollectionStatusUpdated
	}
	d := events.PaymentStatusData{
		TransactionID: p.ID,
		ExternalID:    p.ExternalID,
		Type:          string(p.Type),
		Status:        string(p.Status),
		Amount:        money.JSON(p.Amount, p.Currency),
		FeeAmount:     money.JSON(p.Fee, p.Currency),
		Currency:      p.Currency,
		Country:       p.Country,
		Operator:      p.Operator,
		PhoneNumber:   p.PhoneNumber,
		UpdatedAt:     timestamp.Format(p.UpdatedAt),
	}
	if prev != "" {
		s := string(prev)
		d.PreviousStatus = &s
	}
	if p.Status == StatusFailed {
		m := p.ErrorMessage
		d.ErrorMessage = &m
	}
	return events.NewPaymentStatusUpdated(p.CompanyID, kind, d, p.NotifyURL, p.UpdatedAt)
}

// MaxUpstreamBytes bounds the operator answer stored on a payment (a
// DynamoDB item holds at most 400 KB).
const MaxUpstreamBytes = 16 << 10

// upstream returns raw as it is stored and shown: a JSON value as is, any
// other text as a JSON string, and an answer larger than MaxUpstreamBytes
// replaced by {"truncated": true, "bytes": <size>}.
func upstream(raw json.RawMessage) json.RawMessage {
	switch {
	case len(raw) == 0:
		return nil
	case len(raw) > MaxUpstreamBytes:
		return json.RawMessage(fmt.Sprintf(`{"truncated":true,"bytes":%d}`, len(raw)))
	case !json.Valid(raw):
		b, _ := json.Marshal(string(raw))
		return b
	}
	return raw
}
