package payments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"payments/pkg/correlation"
	"payments/pkg/events"
	"payments/pkg/ids"
	"payments/pkg/metrics"
	"payments/pkg/providers/operator"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// Job is the body of a message on the payouts queue (payouts and
// collections share it), or on the bulk payouts queue for an item of a
// bulk batch (queueOf): handle payment TransactionID of CompanyID, which
// expected the message at Due. A message whose Due is not the payment's
// NextPollAt any more is stale (another copy, or the sweeper, went on with
// the payment) and is dropped, so one payment never has two live chains of
// messages.
//
// Events, when present, are outbox events of CompanyID committed before the
// message was sent; the worker publishes them (queues them on the webhooks
// queue and marks them published) before it handles the payment. The
// acceptance's submit message carries the acceptance's event, so that the
// payments function sends one message per acceptance (docs/publication.md).
// A message with Events and no TransactionID only publishes them (Relay).
// A message without Events, as every message was before they existed, is
// handled as before. A worker that does not know Events ignores them in a
// submit message and drops an events-only one as malformed; either way the
// sweeper publishes the events after outbox.Grace.
//
// Update, when present, is the operator's final answer about the payment,
// as a verified provider callback carried it (QueueUpdate): the worker
// applies it at once, whatever the payment's schedule, through the same
// conditional transition as a poll's answer, so a callback racing a poll
// is applied once.
type Job struct {
	CompanyID     string   `json:"company_id"`
	TransactionID string   `json:"transaction_id,omitempty"`
	Due           string   `json:"due,omitempty"`
	Events        []string `json:"events,omitempty"`
	Update        *Update  `json:"update,omitempty"`
}

// The polling schedule (spec §4.16): every 5 s for the first 30 s after
// acceptance, then half the time elapsed since acceptance (at least 10 s,
// at most SQS's 900 s), landing on the deadline; after the deadline every
// 900 s until ReconcileWindow. For an item of a bulk batch, acceptance
// means its writing as a payout (Payment.Written).
const (
	PollInterval   = 5 * time.Second
	FastPollWindow = 30 * time.Second
	BackoffBase    = 10 * time.Second
	MaxPollDelay   = 900 * time.Second
)

// NextPollDelay returns how long after now to handle a payment written at
// written (Payment.Written) again, with the given deadline.
func NextPollDelay(written, now time.Time, deadline time.Duration) time.Duration {
	elapsed := now.Sub(written)
	var d time.Duration
	switch {
	case elapsed < FastPollWindow:
		d = PollInterval
	case elapsed < deadline:
		d = min(max(elapsed/2, BackoffBase), MaxPollDelay)
	default:
		d = MaxPollDelay
	}
	if elapsed < deadline {
		d = min(d, deadline-elapsed)
	}
	return max(d, time.Second)
}

// ParseJob decodes a message body; a body that is not a Job is an error.
func ParseJob(body []byte) (Job, error) {
	var j Job
	if err := json.Unmarshal(body, &j); err != nil {
		return Job{}, fmt.Errorf("payments: job: %w", err)
	}
	if !ids.IsUUID(j.CompanyID) {
		return Job{}, fmt.Errorf("payments: job: bad company_id in %.200q", body)
	}
	for _, id := range j.Events {
		if !ids.IsUUID(id) {
			return Job{}, fmt.Errorf("payments: job: bad event id in %.200q", body)
		}
	}
	if j.TransactionID == "" && j.Due == "" && len(j.Events) > 0 && j.Update == nil {
		return j, nil // events only
	}
	if !ids.IsUUID(j.TransactionID) {
		return Job{}, fmt.Errorf("payments: job: bad transaction_id in %.200q", body)
	}
	if u := j.Update; u != nil {
		if j.Due != "" || len(j.Events) > 0 || !u.State.Final() || (u.Kind != operator.Payout && u.Kind != operator.Collection) {
			return Job{}, fmt.Errorf("payments: job: bad update in %.200q", body)
		}
		return j, nil
	}
	if _, err := timestamp.Parse(j.Due); err != nil {
		return Job{}, fmt.Errorf("payments: job: bad due in %.200q", body)
	}
	return j, nil
}

// sendJob queues the message that expects p at due, on p's queue
// (queueOf), carrying the ids of evs (committed events of p's company) for
// the worker to publish.
func (s *Service) sendJob(ctx context.Context, p Payment, due time.Time, evs ...events.Event) error {
	q := s.queueOf(p)
	if q == nil {
		return errors.New("payments: no payouts queue")
	}
	body, err := jobBody(p, due, evs)
	if err != nil {
		return err
	}
	if err := q.Send(ctx, body, max(due.Sub(s.now()), 0)); err != nil {
		return fmt.Errorf("payments: queue job of %s: %w", p.ID, err)
	}
	return nil
}

// queueOf returns the queue of the messages about p: the bulk payouts
// queue for an item of a bulk batch, whose submission and polls are the
// batch's work and wait behind other batches' work only, the payouts queue
// for any other payment. (The operator's callbacks, QueueUpdate, go to the
// payouts queue whatever the payment: their sender does not read it.)
func (s *Service) queueOf(p Payment) Jobs {
	if p.BatchID != "" {
		return s.bulkJobs
	}
	return s.jobs
}

// jobBody is the message that expects p at due, carrying the ids of evs.
func jobBody(p Payment, due time.Time, evs []events.Event) ([]byte, error) {
	j := Job{CompanyID: p.CompanyID, TransactionID: p.ID, Due: timestamp.Format(due)}
	for _, e := range evs {
		j.Events = append(j.Events, e.ID)
	}
	body, err := json.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("payments: encode job: %w", err)
	}
	return body, nil
}

// Relay returns a Publisher that hands committed events to the payout
// worker: one message on the payouts queue per company, naming the events,
// which the worker publishes (HandleJob). The payments function publishes
// through it, so that it sends to one queue only. A failed send leaves the
// events to the sweeper, as a failed publication does.
func Relay(jobs Jobs) Publisher { return relay{jobs} }

type relay struct{ jobs Jobs }

// Publish sends the events' ids, one message per company.
func (r relay) Publish(ctx context.Context, evs ...events.Event) error {
	var companies []string
	byCompany := map[string][]string{}
	for _, e := range evs {
		if byCompany[e.CompanyID] == nil {
			companies = append(companies, e.CompanyID)
		}
		byCompany[e.CompanyID] = append(byCompany[e.CompanyID], e.ID)
	}
	var errs []error
	for _, c := range companies {
		body, err := json.Marshal(Job{CompanyID: c, Events: byCompany[c]})
		if err == nil {
			err = r.jobs.Send(ctx, body, 0)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("payments: relay events %v: %w", byCompany[c], err))
		}
	}
	return errors.Join(errs...)
}

// HandleJob processes one message of the payouts queue. It is idempotent:
// a message whose payment is final, or that the payment no longer expects,
// does nothing. The events a live message carries are published first; a
// message of events alone only publishes them. A PENDING payment is
// submitted before its deadline; after it, one never sent to the operator
// is failed (failUnsent), one the operator may have is asked about and, if
// still not final, flagged for reconciliation (check). A nil error
// acknowledges the message; an error leaves it for redelivery. A malformed
// message, or one naming a payment that does not exist, is logged and
// acknowledged: delivering it again cannot help.
func (s *Service) HandleJob(ctx context.Context, body []byte) error {
	j, err := ParseJob(body)
	if err != nil {
		slog.ErrorContext(ctx, "drop malformed payouts message", "error", err)
		return nil
	}
	if j.TransactionID == "" {
		s.publishJobEvents(ctx, j)
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
	// The payment's work goes on under the id of the request that accepted
	// it, whatever sent this message.
	ctx = correlation.NewContext(ctx, p.CorrelationID)
	if j.Update != nil {
		return s.applyUpdate(ctx, p, *j.Update)
	}
	if p.Status.Terminal() || timestamp.Format(p.NextPollAt) != j.Due {
		// The copy that ran, or the sweeper, published the events.
		return nil
	}
	s.publishJobEvents(ctx, j)
	if p.Status == StatusPending {
		switch {
		case s.now().Before(s.deadlineOf(p)):
			return s.submit(ctx, p)
		case p.Submission == NotSubmitted:
			return s.failUnsent(ctx, p)
		}
	}
	return s.check(ctx, p)
}

// publishJobEvents publishes the events a message carries, before the
// payment is handled, so that they are queued before the events of the
// transitions that follow (which is no promise of delivery order: the
// webhooks queue is not ordered). A failure is logged and the message goes on:
// the events stay unpublished and the sweeper publishes them after
// outbox.Grace, as after any failed publication.
func (s *Service) publishJobEvents(ctx context.Context, j Job) {
	evs := make([]events.Event, len(j.Events))
	for i, id := range j.Events {
		evs[i] = events.Event{ID: id, CompanyID: j.CompanyID} // the publisher needs only the key
	}
	s.publish(ctx, evs...)
}

// submit sends a PENDING payment to the operator (Submit is idempotent on
// the transaction id) and moves it to PROCESSING. It first records that
// the payment is being submitted (MarkSubmitting): from then on the
// operator may have it, so at the deadline it waits for reconciliation
// instead of being failed as unsent. When the operator cannot be reached
// the submission is tried again later, until the deadline.
func (s *Service) submit(ctx context.Context, p Payment) error {
	if p.Submission != Submitting {
		switch err := s.store.MarkSubmitting(ctx, p.CompanyID, p.ID); {
		case errors.Is(err, ErrStatusChanged):
			return nil // another delivery moved it on
		case err != nil:
			return fmt.Errorf("payments: mark %s submitting: %w", p.ID, err)
		}
		p.Submission = Submitting
	}
	res, err := s.gateway.Submit(ctx, operator.Request{
		Kind:          OperatorKind(p.Type),
		TransactionID: p.ID,
		CompanyID:     p.CompanyID,
		Operator:      p.Operator,
		Country:       p.Country,
		PhoneNumber:   p.PhoneNumber,
		Amount:        p.Amount,
		Currency:      p.Currency,
	})
	if err != nil {
		slog.WarnContext(ctx, "operator submit; trying again later", "company_id", p.CompanyID, "transaction_id", p.ID, "error", err)
		return s.reschedule(ctx, p, p.ReconciliationRequired)
	}
	next, err := s.toProcessing(ctx, p, res)
	if err != nil || next.Status != StatusProcessing {
		return err
	}
	if o, ok := outcomeOf(res); ok {
		return s.finish(ctx, next, o)
	}
	return nil
}

// failUnsent fails a payment that was never sent to the operator and
// whose deadline has passed (its message came too late: a backlog, or a
// message lost and resent by the sweeper). The client has been told to
// treat a payment not final by the deadline as failed and may have paid
// another way, so it is not sent any more: it becomes FAILED with
// NotSentMessage and a payout's reservation is released. The transition
// is conditioned on the payment still being NotSubmitted, so a copy of
// the message that is submitting it meanwhile wins.
func (s *Service) failUnsent(ctx context.Context, p Payment) error {
	slog.WarnContext(ctx, "payment failed: not sent to the operator before its deadline",
		"company_id", p.CompanyID, "transaction_id", p.ID, "created_at", p.CreatedAt, "written_at", p.Written())
	return s.finish(ctx, p, outcome{status: StatusFailed, reason: NotSentMessage})
}

// toProcessing moves a PENDING payment the operator has accepted to
// PROCESSING with its order, expecting its first poll after NextPollDelay.
// The poll is queued before the transition is written: a message the
// payment does not expect is dropped, a payment that expects a message
// that was never sent is resumed by the sweeper. A payment that moved on
// is returned as it was, with a nil error.
func (s *Service) toProcessing(ctx context.Context, p Payment, res operator.Result) (Payment, error) {
	now := s.now()
	next := p
	next.Status = StatusProcessing
	next.OrderID = res.OrderID
	next.Upstream = upstream(res.Raw)
	next.UpdatedAt = now
	next.NextPollAt = now.Add(NextPollDelay(p.Written(), now, s.deadline))
	next.ReconciliationRequired = p.ReconciliationRequired || !now.Before(s.deadlineOf(p))
	if err := s.sendJob(ctx, next, next.NextPollAt); err != nil {
		return p, err
	}
	t := Transition{From: StatusPending, Payment: next, Now: now}
	if p.Type == TypePayout && p.EntryID != "" { // a bulk item has none
		t.Entry = &EntryChange{
			ID: p.EntryID, From: wallets.StatusPending, To: wallets.StatusProcessing,
			Held: p.Total(), Reserved: p.Total(), OrderID: res.OrderID,
		}
	}
	var err error
	if t.Event, err = statusEvent(next, StatusPending); err != nil {
		return p, err
	}
	switch err := s.store.ApplyTransition(ctx, t); {
	case errors.Is(err, ErrStatusChanged):
		return p, nil
	case err != nil:
		return p, fmt.Errorf("payments: move %s to PROCESSING: %w", p.ID, err)
	}
	slog.InfoContext(ctx, "payment processing", "company_id", p.CompanyID, "transaction_id", p.ID, "order_id", res.OrderID)
	s.publish(ctx, t.Event)
	return next, nil
}

// check asks the operator about a payment it may have (by its order, or by
// our reference when no order is known): a final answer is applied; a
// PENDING payment the operator turns out to have moves to PROCESSING; at
// the deadline a payment still not final is flagged for reconciliation
// after one more question by our reference. Then the next check is
// scheduled, until ReconcileWindow.
func (s *Service) check(ctx context.Context, p Payment) error {
	res, err := s.ask(ctx, p)
	if err == nil {
		if o, ok := outcomeOf(res); ok {
			return s.finish(ctx, p, o)
		}
		if p.Status == StatusPending && res.OrderID != "" {
			_, err := s.toProcessing(ctx, p, res)
			return err
		}
	}
	flagged := p.ReconciliationRequired
	if !s.now().Before(s.deadlineOf(p)) && !p.ReconciliationRequired {
		if p.OrderID != "" {
			// At the deadline the operator is asked once more, by our
			// reference: a lost answer to a submission is found this way.
			if res, err := s.gateway.Lookup(ctx, OperatorKind(p.Type), p.ID); err == nil {
				if o, ok := outcomeOf(res); ok {
					return s.finish(ctx, p, o)
				}
			}
		}
		p.ReconciliationRequired = true
		slog.WarnContext(ctx, "payment flagged for reconciliation: no final answer by the deadline",
			"company_id", p.CompanyID, "transaction_id", p.ID, "status", p.Status, "order_id", p.OrderID)
	}
	return s.reschedule(ctx, p, flagged)
}

// ask asks the operator about p: by its order id when it has one, else by
// our reference.
func (s *Service) ask(ctx context.Context, p Payment) (operator.Result, error) {
	var res operator.Result
	var err error
	if p.OrderID != "" {
		res, err = s.gateway.Status(ctx, OperatorKind(p.Type), p.OrderID)
	} else {
		res, err = s.gateway.Lookup(ctx, OperatorKind(p.Type), p.ID)
	}
	if err != nil && !errors.Is(err, operator.ErrNotFound) {
		slog.WarnContext(ctx, "operator status", "company_id", p.CompanyID, "transaction_id", p.ID, "error", err)
	}
	return res, err
}

// reschedule queues the next handling of p after NextPollDelay and records
// it, with p's reconciliation flag, on the payment; past ReconcileWindow it
// records that the worker has stopped, the payment flagged: only the
// operator console goes on. flagged is the flag as the payment had it
// before: a payment flagged now is counted once, when the flag is stored.
func (s *Service) reschedule(ctx context.Context, p Payment, flagged bool) error {
	prev := p.NextPollAt
	now := s.now()
	end := p.Written().Add(ReconcileWindow)
	if now.Before(end) {
		p.NextPollAt = now.Add(min(NextPollDelay(p.Written(), now, s.deadline), end.Sub(now)))
		if err := s.sendJob(ctx, p, p.NextPollAt); err != nil {
			return err
		}
	} else {
		p.NextPollAt = time.Time{}
		p.ReconciliationRequired = true
		slog.WarnContext(ctx, "payment left to the operator console: no final answer within the reconciliation window",
			"company_id", p.CompanyID, "transaction_id", p.ID, "status", p.Status)
	}
	switch err := s.store.Reschedule(ctx, p, prev); {
	case errors.Is(err, ErrStatusChanged):
		return nil
	case err != nil:
		return fmt.Errorf("payments: reschedule %s: %w", p.ID, err)
	}
	if p.ReconciliationRequired && !flagged {
		count(ctx, p, metrics.PayoutsToReconciliation, metrics.CollectionsToReconciliation)
	}
	return nil
}

// OperatorKind is the kind of the operator's request that pays or
// collects a payment of type t.
func OperatorKind(t Type) operator.Kind {
	if t == TypeCollection {
		return operator.Collection
	}
	return operator.Payout
}
