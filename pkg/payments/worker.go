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

// JobKind names what a message on the payouts queue asks for.
type JobKind string

// Job kinds.
const (
	// JobSubmit submits a PENDING payment to the operator and moves it to
	// PROCESSING.
	JobSubmit JobKind = "submit"
	// JobPoll asks the operator about a PROCESSING payment and settles,
	// fails or polls again.
	JobPoll JobKind = "poll"
)

// Job is the body of a message on the payouts queue (payouts and
// collections share it).
type Job struct {
	Kind          JobKind `json:"kind"`
	CompanyID     string  `json:"company_id"`
	TransactionID string  `json:"transaction_id"`
	// Step counts the back-off polls already scheduled after the first
	// FastPollWindow; see NextPollDelay.
	Step int `json:"step,omitempty"`
}

// The polling schedule (spec §4.16): every 5 s for the first 30 s after
// acceptance, then 10 s doubling at each poll (10, 20, 40, …), capped at
// SQS's 900 s and never past the 15-minute deadline.
const (
	PollInterval   = 5 * time.Second
	FastPollWindow = 30 * time.Second
	BackoffBase    = 10 * time.Second
	MaxPollDelay   = 900 * time.Second
)

// NextPollDelay returns the delay of the next poll of a payment accepted at
// createdAt, asked at now, with step back-off polls already made, and the
// step to carry in that poll.
func NextPollDelay(createdAt, now time.Time, step int) (time.Duration, int) {
	elapsed := now.Sub(createdAt)
	var d time.Duration
	next := step
	if elapsed < FastPollWindow {
		d = PollInterval
	} else {
		d = MaxPollDelay
		if step < 7 {
			d = min(BackoffBase<<step, MaxPollDelay)
		}
		next = step + 1
	}
	if remaining := Timeout - elapsed; d > remaining {
		d = remaining
	}
	return max(d, time.Second), next
}

// ParseJob decodes a message body; a body that is not a Job is an error.
func ParseJob(body []byte) (Job, error) {
	var j Job
	if err := json.Unmarshal(body, &j); err != nil {
		return Job{}, fmt.Errorf("payments: job: %w", err)
	}
	if (j.Kind != JobSubmit && j.Kind != JobPoll) || j.CompanyID == "" || !ids.IsUUID(j.TransactionID) || j.Step < 0 {
		return Job{}, fmt.Errorf("payments: job: bad kind, company_id or transaction_id in %.200q", body)
	}
	return j, nil
}

// sendJob queues j to become visible after delay.
func (s *Service) sendJob(ctx context.Context, j Job, delay time.Duration) error {
	if s.jobs == nil {
		return errors.New("payments: no payouts queue")
	}
	body, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("payments: encode job: %w", err)
	}
	return s.jobs.Send(ctx, body, delay)
}

// HandleJob processes one message of the payouts queue. It is idempotent:
// a job whose payment has moved on does nothing. A nil error acknowledges
// the message; an error leaves it for redelivery. A malformed message, or
// one naming a payment that does not exist, is logged and acknowledged:
// delivering it again cannot help.
func (s *Service) HandleJob(ctx context.Context, body []byte) error {
	j, err := ParseJob(body)
	if err != nil {
		slog.ErrorContext(ctx, "drop malformed payouts message", "error", err)
		return nil
	}
	p, err := s.store.GetPayment(ctx, j.CompanyID, j.TransactionID)
	if errors.Is(err, ErrNotFound) {
		slog.WarnContext(ctx, "drop message for unknown payment", "company_id", j.CompanyID, "transaction_id", j.TransactionID)
		return nil
	}
	if err != nil {
		return err
	}
	if j.Kind == JobSubmit {
		return s.submit(ctx, p)
	}
	return s.poll(ctx, p, j.Step)
}

// submit sends a PENDING payment to the operator (Submit is idempotent on
// the transaction id), moves it to PROCESSING and schedules the first poll.
// A PROCESSING payment only gets a poll scheduled: its submit message came
// again, perhaps because the poll could not be queued.
func (s *Service) submit(ctx context.Context, p Payment) error {
	switch p.Status {
	case StatusPending:
	case StatusProcessing:
		return s.schedulePoll(ctx, p, 0)
	default:
		return nil
	}
	if !s.now().Before(p.Deadline()) {
		return s.finish(ctx, p, timedOut(nil))
	}
	res, err := s.gateway.Submit(ctx, operator.Request{
		Kind:          operatorKind(p.Type),
		TransactionID: p.ID,
		Operator:      p.Operator,
		Country:       p.Country,
		PhoneNumber:   p.PhoneNumber,
		Amount:        p.Amount,
		Currency:      p.Currency,
	})
	if err != nil {
		return fmt.Errorf("payments: submit %s: %w", p.ID, err)
	}
	now := s.now()
	next := p
	next.Status = StatusProcessing
	next.OrderID = res.OrderID
	next.Upstream = upstream(res.Raw)
	next.UpdatedAt = now
	t := Transition{From: StatusPending, Payment: next, Now: now}
	if p.Type == TypePayout {
		t.Entry = &EntryChange{
			ID: p.EntryID, From: wallets.StatusPending, To: wallets.StatusProcessing,
			Reserved: p.Total(), OrderID: res.OrderID,
		}
	}
	if t.Event, err = statusEvent(next, StatusPending); err != nil {
		return err
	}
	switch err := s.store.ApplyTransition(ctx, t); {
	case errors.Is(err, ErrStatusChanged):
		return nil
	case err != nil:
		return fmt.Errorf("payments: move %s to PROCESSING: %w", p.ID, err)
	}
	slog.InfoContext(ctx, "payment processing", "company_id", p.CompanyID, "transaction_id", p.ID, "order_id", res.OrderID)
	s.publish(ctx, t.Event)
	if o, ok := outcomeOf(res); ok {
		return s.finish(ctx, next, o)
	}
	return s.schedulePoll(ctx, next, 0)
}

// poll asks the operator about a PROCESSING payment: a final answer is
// applied; otherwise the next poll is scheduled, or, at the deadline, the
// payment times out. An operator error is treated as "still processing".
func (s *Service) poll(ctx context.Context, p Payment, step int) error {
	if p.Status != StatusProcessing {
		return nil
	}
	res, err := s.gateway.Status(ctx, p.OrderID)
	if err != nil {
		slog.WarnContext(ctx, "operator status", "company_id", p.CompanyID, "transaction_id", p.ID, "error", err)
		res = operator.Result{State: operator.Processing}
	}
	if o, ok := outcomeOf(res); ok {
		return s.finish(ctx, p, o)
	}
	if !s.now().Before(p.Deadline()) {
		return s.finish(ctx, p, timedOut(res.Raw))
	}
	return s.schedulePoll(ctx, p, step)
}

// schedulePoll queues the next poll of p.
func (s *Service) schedulePoll(ctx context.Context, p Payment, step int) error {
	d, next := NextPollDelay(p.CreatedAt, s.now(), step)
	if err := s.sendJob(ctx, Job{Kind: JobPoll, CompanyID: p.CompanyID, TransactionID: p.ID, Step: next}, d); err != nil {
		return fmt.Errorf("payments: schedule poll of %s: %w", p.ID, err)
	}
	return nil
}

// outcome is a final answer about a payment.
type outcome struct {
	status  Status
	reason  string
	orderID string
	raw     json.RawMessage
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

// timedOut is the outcome of a payment past its deadline.
func timedOut(raw json.RawMessage) outcome {
	return outcome{status: StatusFailed, reason: TimeoutMessage, raw: raw}
}

// finish applies a final outcome to p through a transition conditioned on
// p's status: exactly once, whoever calls it and however often. A lost race
// for the wallet is retried from a fresh read of the wallet; a payment that
// moved on means another delivery finished it, which is success.
func (s *Service) finish(ctx context.Context, p Payment, o outcome) error {
	for attempt := 1; ; attempt++ {
		t, err := s.transition(ctx, p, o)
		if err != nil {
			return err
		}
		err = s.store.ApplyTransition(ctx, t)
		switch {
		case err == nil:
			slog.InfoContext(ctx, "payment finished", "company_id", p.CompanyID, "transaction_id", p.ID,
				"type", p.Type, "status", o.status, "error_message", t.Payment.ErrorMessage)
			s.publish(ctx, t.Event)
			return nil
		case errors.Is(err, ErrStatusChanged):
			return nil
		case errors.Is(err, wallets.ErrStale) && attempt < wallets.MaxAttempts:
			if err := sleep(ctx, s.Backoff(attempt)); err != nil {
				return err
			}
		default:
			return fmt.Errorf("payments: finish %s as %s: %w", p.ID, o.status, err)
		}
	}
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
func (s *Service) transition(ctx context.Context, p Payment, o outcome) (Transition, error) {
	now := s.now()
	next := p
	next.Status = o.status
	next.UpdatedAt = now
	next.CompletedAt = &now
	if o.orderID != "" {
		next.OrderID = o.orderID
	}
	if o.raw != nil {
		next.Upstream = upstream(o.raw)
	}
	if o.status == StatusFailed {
		next.ErrorMessage = o.reason
	}
	t := Transition{From: p.Status, Payment: next, Now: now}
	var err error
	if t.Event, err = statusEvent(next, p.Status); err != nil {
		return Transition{}, err
	}
	if p.Type == TypeCollection && o.status == StatusFailed {
		return t, nil
	}
	w, err := s.wallets.GetWallet(ctx, p.CompanyID, p.WalletID)
	if err != nil {
		return Transition{}, fmt.Errorf("payments: read wallet %s: %w", p.WalletID, err)
	}
	t.Wallet = &w
	entry := wallets.Transaction{
		ID:            ids.NewV7(now),
		CompanyID:     p.CompanyID,
		WalletID:      w.ID,
		Amount:        p.Amount,
		FeeAmount:     p.Fee,
		Currency:      p.Currency,
		Status:        wallets.StatusSuccess,
		Operator:      p.Operator,
		PhoneNumber:   p.PhoneNumber,
		Reference:     p.ExternalID,
		OrderID:       next.OrderID,
		PaymentID:     p.ID,
		CreatedAt:     now,
		CompletedAt:   &now,
		AmountWithFee: p.Total(),
	}
	switch {
	case p.Type == TypeCollection: // SUCCESS
		net := p.Net()
		before, after := w.PayinBalance, w.PayinBalance+net
		t.Adjust = wallets.Adjustment{Payin: net}
		entry.Type = wallets.TypeDeposit
		entry.Balance = wallets.Payin
		entry.NetAmount = net
		entry.Delta = net
		entry.BalanceBefore, entry.BalanceAfter = &before, &after
		t.NewEntries = []wallets.Transaction{entry}
	case o.status == StatusSuccess: // payout
		total := p.Total()
		before, after := w.PayoutBalance, w.PayoutBalance-total
		t.Adjust = wallets.Adjustment{Payout: -total, Reserved: -total}
		t.Entry = &EntryChange{
			ID: p.EntryID, From: wallets.Status(p.Status), To: wallets.StatusSuccess,
			Delta: -total, BalanceBefore: &before, BalanceAfter: &after,
			OrderID: next.OrderID, CompletedAt: &now,
		}
	default: // payout FAILED
		total := p.Total()
		balance := w.PayoutBalance
		t.Adjust = wallets.Adjustment{Reserved: -total}
		t.Entry = &EntryChange{
			ID: p.EntryID, From: wallets.Status(p.Status), To: wallets.StatusFailed,
			OrderID: next.OrderID, CompletedAt: &now,
		}
		entry.Type = wallets.TypeRefund
		entry.Balance = wallets.Payout
		entry.NetAmount = p.Amount
		entry.BalanceBefore, entry.BalanceAfter = &balance, &balance
		t.NewEntries = []wallets.Transaction{entry}
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

func operatorKind(t Type) operator.Kind {
	if t == TypeCollection {
		return operator.Collection
	}
	return operator.Payout
}
